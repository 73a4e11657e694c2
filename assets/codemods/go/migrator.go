// The migrator: the edits of one file, planned function by function (docs/reference-project.md#project-migrate-tdd).

package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

// unsafe stops the rewrite of a file: it is left as it is, with the reason.
type unsafe struct {
	pos    token.Pos
	reason string
}

// migrator plans the edits of one file.
type migrator struct {
	job     job
	fset    *token.FileSet
	file    *ast.File
	src     []byte
	edits   []edit
	changes []string
	bad     *unsafe
	// wireRisk: the function being planned does what a call over the wire cannot keep (see wireRisk).
	wireRisk string
}

// wireRisk: a direct call that becomes a call through the client loses two things a test can depend on: context
// values (they do not cross the wire) and the identity of the error the handler returned (errors.Is against a Go
// sentinel no longer matches a *connect.Error). A function using either is left alone.
func wireRisk(body ast.Node) string {
	risk := ""
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && risk == "" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Obj == nil {
				switch {
				case pkg.Name == "context" && sel.Sel.Name == "WithValue":
					risk = "passes context values (context.WithValue), which do not cross the wire to the harness's server"
				case pkg.Name == "errors" && sel.Sel.Name == "Is":
					risk = "compares the handler's errors with errors.Is: through the harness's client they arrive as *connect.Error"
				}
			}
		}
		return risk == ""
	})
	return risk
}

func (m *migrator) off(p token.Pos) int { return m.fset.Position(p).Offset }

func (m *migrator) text(n ast.Node) string { return string(m.src[m.off(n.Pos()):m.off(n.End())]) }

func (m *migrator) replace(n ast.Node, text string) {
	m.edits = append(m.edits, edit{m.off(n.Pos()), m.off(n.End()), text})
}

func (m *migrator) fail(p token.Pos, reason string) {
	if m.bad == nil {
		m.bad = &unsafe{p, reason}
	}
}

// deleteStmt removes a statement's line; a comment after it on the line stays, on its own line.
func (m *migrator) deleteStmt(s ast.Stmt) {
	start, end := m.off(s.Pos()), m.off(s.End())
	lineStart := start
	for lineStart > 0 && m.src[lineStart-1] != '\n' {
		lineStart--
	}
	lineEnd := end
	for lineEnd < len(m.src) && m.src[lineEnd] != '\n' {
		lineEnd++
	}
	rest := strings.TrimSpace(string(m.src[end:lineEnd]))
	before := strings.TrimSpace(string(m.src[lineStart:start]))
	if before != "" { // another statement on the line: remove this one only
		m.edits = append(m.edits, edit{start, end, ""})
		return
	}
	indent := string(m.src[lineStart:start])
	if rest != "" {
		m.edits = append(m.edits, edit{lineStart, lineEnd, indent + rest})
		return
	}
	if lineEnd < len(m.src) {
		lineEnd++
	}
	m.edits = append(m.edits, edit{lineStart, lineEnd, ""})
}

func (m *migrator) change(fn string, format string, args ...any) {
	m.changes = append(m.changes, fn+": "+fmt.Sprintf(format, args...))
}

// scope is one function (declaration or literal) on the way down: its name and its testing parameter.
type scope struct {
	name  string
	tname string
}

func testingParam(ft *ast.FuncType) string {
	if ft.Params == nil {
		return ""
	}
	for _, f := range ft.Params.List {
		if isTestingType(f.Type) && len(f.Names) == 1 && f.Names[0].Name != "_" {
			return f.Names[0].Name
		}
	}
	return ""
}

func isTestingType(e ast.Expr) bool {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && (sel.Sel.Name == "T" || sel.Sel.Name == "B" || sel.Sel.Name == "F" || sel.Sel.Name == "TB")
}

func (m *migrator) plan() {
	for _, d := range m.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		m.function(fd.Name.Name, fd.Type, fd.Body, "")
	}
}

// function plans the rewrites of one function body; func literals inside it are functions of their own
// for the testing parameter (a subtest's t), not for the variables they share.
func (m *migrator) function(name string, ft *ast.FuncType, body *ast.BlockStmt, outerT string) {
	t := testingParam(ft)
	if t == "" {
		t = outerT
	}
	outerRisk := m.wireRisk
	defer func() { m.wireRisk = outerRisk }()
	if risk := wireRisk(body); risk != "" {
		m.wireRisk = risk
	}
	uses := identUses(body)
	consumed := map[*ast.Object]bool{} // handler variables served by a rewritten server
	servedNodes := map[ast.Node]bool{}
	// 1. A server of its own: mux := http.NewServeMux(); mux.Handle(x.New<Svc>Handler(h)); srv := httptest.NewServer(mux).
	ast.Inspect(body, func(n ast.Node) bool {
		if lit, ok := n.(*ast.FuncLit); ok && testingParam(lit.Type) != "" {
			return false // a subtest: a function of its own
		}
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for _, s := range block.List {
			m.server(name, t, block, s, uses, consumed, servedNodes)
		}
		return true
	})
	// 2. Handler variables called directly; 3. inline (&Handler{}).Method(...) calls.
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			if testingParam(x.Type) != "" {
				m.function(name, x.Type, x.Body, t)
				return false
			}
		case *ast.AssignStmt:
			m.handlerVar(name, t, x, uses, consumed)
		case *ast.DeclStmt:
			m.handlerVarDecl(name, t, x, uses, consumed)
		case *ast.CallExpr:
			m.inlineCall(name, t, x)
		}
		return true
	})
	m.residue(name, body, servedNodes)
}

// identUses: every identifier of the body by the object it refers to.
func identUses(body ast.Node) map[*ast.Object][]*ast.Ident {
	out := map[*ast.Object][]*ast.Ident{}
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Obj != nil {
			out[id.Obj] = append(out[id.Obj], id)
		}
		return true
	})
	return out
}

// handlerCons: a construction of the package's Handler: &Handler{...}, Handler{...}, new(Handler).
// Returns the expression NewHarnessFor needs (a *Handler) or "" for a zero Handler, and whether it is a pointer.
func (m *migrator) handlerCons(e ast.Expr) (ok bool, forArg string, pointer bool) {
	for {
		p, isParen := e.(*ast.ParenExpr)
		if !isParen {
			break
		}
		e = p.X
	}
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if lit, isLit := x.X.(*ast.CompositeLit); isLit && x.Op == token.AND && isHandlerType(lit.Type) {
			if len(lit.Elts) == 0 {
				return true, "", true
			}
			return true, m.text(x), true
		}
	case *ast.CompositeLit:
		if isHandlerType(x.Type) {
			if len(x.Elts) == 0 {
				return true, "", false
			}
			return true, "&" + m.text(x), false
		}
	case *ast.CallExpr:
		if fn, isId := x.Fun.(*ast.Ident); isId && fn.Name == "new" && len(x.Args) == 1 && isHandlerType(x.Args[0]) {
			return true, "", true
		}
	}
	return false, "", false
}

func isHandlerType(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "Handler"
}

func harnessCall(t, forArg string) string {
	if forArg == "" {
		return "NewHarness(" + t + ")"
	}
	return "NewHarnessFor(" + t + ", " + forArg + ")"
}

func selectorCall(e ast.Expr, pkgSel string) (*ast.CallExpr, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return nil, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != pkgSel {
		return nil, false
	}
	return call, true
}

func singleDefine(s ast.Stmt) (*ast.Ident, ast.Expr, bool) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		if len(x.Lhs) == 1 && len(x.Rhs) == 1 && x.Tok == token.DEFINE {
			if id, ok := x.Lhs[0].(*ast.Ident); ok {
				return id, x.Rhs[0], true
			}
		}
	case *ast.DeclStmt:
		if gd, ok := x.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR && len(gd.Specs) == 1 {
			if vs, ok := gd.Specs[0].(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 && vs.Type == nil {
				return vs.Names[0], vs.Values[0], true
			}
		}
	}
	return nil, nil, false
}
