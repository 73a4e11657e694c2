// Command frameworktdd is `framework project migrate tdd`'s rewriter (docs/reference-project.md#project-migrate-tdd):
// it moves hand-rolled handler tests onto the generated test harness (NewHarness, NewHarnessFor).
//
// It reads a JSON job on stdin ({"files": [{"path", "service", "methods": {name: unary|server|client|bidi}}]})
// and writes one JSON document: per file its status (rewritten, unchanged, skipped), the reason of a skip,
// the rewritten source and what changed. It never writes a file: the caller does.
//
// The rewrite is a set of byte-range edits planned on the go/ast of the file (comments are never moved or
// dropped), then go/format; a file where any construct cannot be rewritten safely is skipped whole.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
)

type job struct {
	Path    string            `json:"path"`
	Service string            `json:"service"`
	Methods map[string]string `json:"methods"`
}

type result struct {
	Path    string   `json:"path"`
	Status  string   `json:"status"`
	Reason  string   `json:"reason,omitempty"`
	Line    int      `json:"line,omitempty"`
	Content string   `json:"content,omitempty"`
	Changes []string `json:"changes,omitempty"`
}

func main() {
	var in struct {
		Files []job `json:"files"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "frameworktdd: bad job:", err)
		os.Exit(2)
	}
	out := struct {
		Files []result `json:"files"`
	}{Files: []result{}}
	for _, j := range in.Files {
		out.Files = append(out.Files, migrateFile(j))
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		os.Exit(2)
	}
}

// unsafe stops the rewrite of a file: it is left as it is, with the reason.
type unsafe struct {
	pos    token.Pos
	reason string
}

func migrateFile(j job) result {
	src, err := os.ReadFile(j.Path)
	if err != nil {
		return result{Path: j.Path, Status: "skipped", Reason: "cannot be read: " + err.Error()}
	}
	out, changes, bad := rewrite(j, src)
	if bad != nil {
		return result{Path: j.Path, Status: "skipped", Reason: bad.reason, Line: bad.line}
	}
	if out == nil || string(out) == string(src) {
		return result{Path: j.Path, Status: "unchanged"}
	}
	return result{Path: j.Path, Status: "rewritten", Content: string(out), Changes: changes}
}

type failure struct {
	reason string
	line   int
}

// rewrite runs the rewrite until it changes nothing more (a second run of the command is then a no-op).
func rewrite(j job, src []byte) ([]byte, []string, *failure) {
	var all []string
	cur := src
	for round := 0; round < 3; round++ {
		next, changes, bad := rewriteOnce(j, cur)
		if bad != nil {
			return nil, nil, bad
		}
		if next == nil || string(next) == string(cur) {
			break
		}
		all = append(all, changes...)
		cur = next
	}
	return cur, all, nil
}

func rewriteOnce(j job, src []byte) ([]byte, []string, *failure) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, j.Path, src, parser.ParseComments)
	if err != nil {
		line := 0
		if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
			line = list[0].Pos.Line
		}
		return nil, nil, &failure{reason: "does not parse: " + firstLine(err.Error()), line: line}
	}
	if ast.IsGenerated(file) {
		return nil, nil, nil
	}
	m := &migrator{job: j, fset: fset, file: file, src: src}
	m.plan()
	if m.bad != nil {
		return nil, nil, &failure{reason: m.bad.reason, line: fset.Position(m.bad.pos).Line}
	}
	if len(m.edits) == 0 {
		return nil, nil, nil
	}
	if strings.HasSuffix(file.Name.Name, "_test") {
		return nil, nil, &failure{reason: fmt.Sprintf("package %s is an external test package: the harness is in "+
			"package %s (move the test into it first)", file.Name.Name, strings.TrimSuffix(file.Name.Name, "_test")),
			line: fset.Position(file.Name.Pos()).Line}
	}
	for _, name := range []string{"Harness", "NewHarness", "NewHarnessFor"} {
		if file.Scope != nil && file.Scope.Lookup(name) != nil {
			return nil, nil, &failure{reason: "the file declares " + name + " itself (the harness's name)"}
		}
	}
	edited, err := apply(src, m.edits)
	if err != nil {
		return nil, nil, &failure{reason: err.Error()}
	}
	edited, err = dropUnusedImports(j.Path, edited)
	if err != nil {
		return nil, nil, &failure{reason: "the rewrite does not parse (left alone): " + firstLine(err.Error())}
	}
	formatted, err := format.Source(edited)
	if err != nil {
		return nil, nil, &failure{reason: "the rewrite does not format (left alone): " + firstLine(err.Error())}
	}
	return formatted, m.changes, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

type edit struct {
	start, end int
	text       string
}

func apply(src []byte, edits []edit) ([]byte, error) {
	sort.Slice(edits, func(a, b int) bool { return edits[a].start > edits[b].start })
	out := append([]byte(nil), src...)
	last := len(src) + 1
	for _, e := range edits {
		if e.end > last {
			return nil, fmt.Errorf("overlapping rewrites at byte %d (left alone)", e.start)
		}
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
		last = e.start
	}
	return out, nil
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

func (m *migrator) server(fn, t string, block *ast.BlockStmt, s ast.Stmt, uses map[*ast.Object][]*ast.Ident,
	consumed map[*ast.Object]bool, served map[ast.Node]bool) {
	srvID, rhs, ok := singleDefine(s)
	if !ok {
		return
	}
	newServer, ok := selectorCall(rhs, "NewServer")
	if !ok || len(newServer.Args) != 1 || !isPkg(newServer.Fun, "httptest") {
		return
	}
	muxID, ok := newServer.Args[0].(*ast.Ident)
	if !ok || muxID.Obj == nil {
		return
	}
	handlerName := "New" + m.job.Service + "Handler"
	clientName := "New" + m.job.Service + "Client"
	var muxDecl, handle ast.Stmt
	var handlerCall *ast.CallExpr
	for _, other := range block.List {
		if id, r, ok := singleDefine(other); ok && id.Obj == muxID.Obj {
			if c, ok := selectorCall(r, "NewServeMux"); ok && isPkg(c.Fun, "http") {
				muxDecl = other
			}
		}
		if es, ok := other.(*ast.ExprStmt); ok {
			if c, ok := selectorCall(es.X, "Handle"); ok && isIdentOf(c.Fun.(*ast.SelectorExpr).X, muxID.Obj) && len(c.Args) == 1 {
				if hc, ok := selectorCall(c.Args[0], handlerName); ok {
					handle, handlerCall = other, hc
				}
			}
		}
	}
	if muxDecl == nil || handle == nil {
		return // not a server of this service's handler
	}
	if len(uses[muxID.Obj]) != 3 {
		m.fail(muxID.Pos(), fmt.Sprintf("%s: the test's mux serves more than %s (the harness serves the handler alone)",
			fn, m.job.Service))
		return
	}
	if len(handlerCall.Args) != 1 {
		m.fail(handlerCall.Pos(), fmt.Sprintf("%s: the handler is served with options (interceptors): the harness has none", fn))
		return
	}
	if t == "" {
		m.fail(s.Pos(), fmt.Sprintf("%s: no *testing.T, *testing.B or testing.TB in scope for the harness", fn))
		return
	}
	forArg := ""
	if ok, arg, _ := m.handlerCons(handlerCall.Args[0]); ok {
		forArg = arg
	} else if id, isId := handlerCall.Args[0].(*ast.Ident); isId && id.Obj != nil {
		forArg = id.Name
		consumed[id.Obj] = true
	} else {
		forArg = m.text(handlerCall.Args[0])
	}
	served[handlerCall] = true
	m.deleteStmt(muxDecl)
	m.deleteStmt(handle)
	m.replace(rhs, harnessCall(t, forArg))
	handled := map[ast.Stmt]bool{}
	for _, use := range uses[srvID.Obj] {
		if use == srvID {
			continue
		}
		if m.serverUse(use, block, clientName, fn, handled) {
			continue
		}
		m.edits = append(m.edits, edit{m.off(use.End()), m.off(use.End()), ".Server"})
	}
	m.change(fn, "its own httptest server of %s now the harness (%s)", m.job.Service, harnessCall(t, forArg))
}

// serverUse rewrites the statements around the test's server that the harness makes redundant: its Close
// (deferred or a cleanup) and the client built on it.
func (m *migrator) serverUse(use *ast.Ident, block *ast.BlockStmt, clientName, fn string, handled map[ast.Stmt]bool) bool {
	for _, s := range block.List {
		if !contains(s, use) {
			continue
		}
		if handled[s] {
			return true
		}
		var call ast.Expr
		switch x := s.(type) {
		case *ast.DeferStmt:
			call = x.Call
		case *ast.ExprStmt:
			call = x.X
		}
		if c, ok := call.(*ast.CallExpr); ok {
			// defer srv.Close() / t.Cleanup(srv.Close)
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Close" && sel.X == use && len(c.Args) == 0 {
				m.deleteStmt(s)
				handled[s] = true
				return true
			}
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Cleanup" && len(c.Args) == 1 {
				if arg, ok := c.Args[0].(*ast.SelectorExpr); ok && arg.X == use && arg.Sel.Name == "Close" {
					m.deleteStmt(s)
					handled[s] = true
					return true
				}
			}
		}
		// client := x.New<Svc>Client(srv.Client(), srv.URL)
		if _, rhs, ok := singleDefine(s); ok {
			if c, ok := selectorCall(rhs, clientName); ok && len(c.Args) >= 2 && isCallOn(c.Args[0], use, "Client") &&
				isSelOn(c.Args[1], use, "URL") {
				if len(c.Args) > 2 {
					m.fail(c.Pos(), fmt.Sprintf("%s: the client is built with options (a protocol or codec): the "+
						"harness's client has none", fn))
					return true
				}
				m.replace(rhs, use.Name+".Client")
				handled[s] = true
				return true
			}
			if a, ok := s.(*ast.AssignStmt); ok && contains(a.Rhs[0], use) {
				if c, ok := selectorCall(a.Rhs[0], clientName); ok {
					m.fail(c.Pos(), fmt.Sprintf("%s: the client is built on the server in a way the harness does not "+
						"know", fn))
					return true
				}
			}
		}
		return false
	}
	return false
}

func contains(n ast.Node, target ast.Node) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if x == target {
			found = true
		}
		return !found
	})
	return found
}

func isCallOn(e ast.Expr, id *ast.Ident, method string) bool {
	c, ok := e.(*ast.CallExpr)
	return ok && len(c.Args) == 0 && isSelOn(c.Fun, id, method)
}

func isSelOn(e ast.Expr, id *ast.Ident, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdentOf(s.X, id.Obj) && s.Sel.Name == name
}

func isPkg(fun ast.Expr, pkg string) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && id.Obj == nil
}

func isIdentOf(e ast.Expr, obj *ast.Object) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Obj == obj
}

// handlerVar: h := &Handler{...} (or Handler{}, new(Handler)) whose RPC methods the test calls directly.
func (m *migrator) handlerVar(fn, t string, a *ast.AssignStmt, uses map[*ast.Object][]*ast.Ident,
	consumed map[*ast.Object]bool) {
	if len(a.Lhs) != 1 || len(a.Rhs) != 1 || a.Tok != token.DEFINE {
		return
	}
	id, ok := a.Lhs[0].(*ast.Ident)
	if !ok || id.Obj == nil {
		return
	}
	isCons, forArg, pointer := m.handlerCons(a.Rhs[0])
	if !isCons {
		return
	}
	m.onHarness(fn, t, id, uses, consumed, forArg, pointer, func(call string) { m.replace(a.Rhs[0], call) }, a.Pos())
}

// handlerVarDecl: var h Handler / var h = &Handler{}.
func (m *migrator) handlerVarDecl(fn, t string, d *ast.DeclStmt, uses map[*ast.Object][]*ast.Ident,
	consumed map[*ast.Object]bool) {
	gd, ok := d.Decl.(*ast.GenDecl)
	if !ok || gd.Tok != token.VAR || len(gd.Specs) != 1 {
		return
	}
	vs, ok := gd.Specs[0].(*ast.ValueSpec)
	if !ok || len(vs.Names) != 1 || vs.Names[0].Obj == nil {
		return
	}
	id := vs.Names[0]
	switch {
	case len(vs.Values) == 0 && isHandlerType(vs.Type):
		m.onHarness(fn, t, id, uses, consumed, "", false, func(call string) {
			m.replace(d, id.Name+" := "+call)
		}, d.Pos())
	case len(vs.Values) == 1 && vs.Type == nil:
		if isCons, forArg, pointer := m.handlerCons(vs.Values[0]); isCons {
			m.onHarness(fn, t, id, uses, consumed, forArg, pointer, func(call string) { m.replace(vs.Values[0], call) },
				d.Pos())
		}
	}
}

// onHarness turns a handler variable into a harness: its RPC calls go through h.Client, its other uses
// are h.Handler (the same *Handler).
func (m *migrator) onHarness(fn, t string, id *ast.Ident, uses map[*ast.Object][]*ast.Ident,
	consumed map[*ast.Object]bool, forArg string, pointer bool, declare func(string), at token.Pos) {
	var rpcCalls, others []*ast.Ident
	for _, use := range uses[id.Obj] {
		if use == id {
			continue
		}
		if kind, ok := m.rpcCallOn(use); ok {
			if kind != "unary" {
				m.fail(use.Pos(), fmt.Sprintf("%s: calls a %s-streaming RPC on the handler directly (its stream "+
					"argument has no harness equivalent)", fn, kind))
				return
			}
			rpcCalls = append(rpcCalls, use)
			continue
		}
		others = append(others, use)
	}
	if len(rpcCalls) == 0 {
		return // a handler the test builds for something else (a server of its own, a helper)
	}
	if consumed[id.Obj] {
		m.fail(at, fmt.Sprintf("%s: the handler is both served by the test's server and called directly", fn))
		return
	}
	if t == "" {
		m.fail(at, fmt.Sprintf("%s: builds the handler outside a test (no *testing.T, *testing.B or testing.TB "+
			"in scope)", fn))
		return
	}
	if m.wireRisk != "" {
		m.fail(at, fmt.Sprintf("%s: %s", fn, m.wireRisk))
		return
	}
	if len(others) > 0 && !pointer {
		m.fail(others[0].Pos(), fmt.Sprintf("%s: uses the Handler value %s other than to call its RPCs", fn, id.Name))
		return
	}
	declare(harnessCall(t, forArg))
	for _, use := range rpcCalls {
		m.edits = append(m.edits, edit{m.off(use.End()), m.off(use.End()), ".Client"})
	}
	for _, use := range others {
		m.edits = append(m.edits, edit{m.off(use.End()), m.off(use.End()), ".Handler"})
	}
	m.change(fn, "handler %s called directly now the harness (%d RPC calls through %s.Client)", id.Name,
		len(rpcCalls), id.Name)
}

// rpcCallOn: use is the receiver of a call of one of the service's RPCs; the RPC's kind.
func (m *migrator) rpcCallOn(use *ast.Ident) (string, bool) {
	var kind string
	found := false
	ast.Inspect(m.file, func(n ast.Node) bool {
		if found {
			return false
		}
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.X == use {
			if k, isRPC := m.job.Methods[sel.Sel.Name]; isRPC {
				kind, found = k, true
			}
		}
		return !found
	})
	return kind, found
}

// inlineCall: (&Handler{}).Ping(ctx, req) -> NewHarness(t).Client.Ping(ctx, req).
func (m *migrator) inlineCall(fn, t string, c *ast.CallExpr) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	kind, isRPC := m.job.Methods[sel.Sel.Name]
	if !isRPC {
		return
	}
	isCons, forArg, _ := m.handlerCons(sel.X)
	if !isCons {
		return
	}
	if kind != "unary" {
		m.fail(c.Pos(), fmt.Sprintf("%s: calls the %s-streaming RPC %s on a handler directly", fn, kind, sel.Sel.Name))
		return
	}
	if t == "" {
		m.fail(c.Pos(), fmt.Sprintf("%s: calls %s on a handler outside a test (no *testing.T in scope)", fn, sel.Sel.Name))
		return
	}
	if m.wireRisk != "" {
		m.fail(c.Pos(), fmt.Sprintf("%s: %s", fn, m.wireRisk))
		return
	}
	m.replace(sel.X, harnessCall(t, forArg)+".Client")
	m.change(fn, "direct call of %s now through the harness's client", sel.Sel.Name)
}

// residue: a handler built or served in a way none of the rewrites above followed stops the file (never a
// half-migrated test).
func (m *migrator) residue(fn string, body *ast.BlockStmt, served map[ast.Node]bool) {
	if m.bad != nil {
		return
	}
	rewritten := func(p token.Pos) bool {
		o := m.off(p)
		for _, e := range m.edits {
			if e.start <= o && o < e.end {
				return true
			}
		}
		return false
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if m.bad != nil {
			return false
		}
		if lit, ok := n.(*ast.FuncLit); ok && testingParam(lit.Type) != "" {
			return false // checked as a function of its own
		}
		switch x := n.(type) {
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New"+m.job.Service+"Handler" && !served[x] &&
				!rewritten(x.Pos()) {
				m.fail(x.Pos(), fn+": serves the handler in a way the codemod does not follow ("+m.text(x)+")")
			}
			if id, ok := x.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, "NewHarness") {
				return false // already on the harness
			}
		}
		return true
	})
}

// dropUnusedImports removes the imports the rewrite left unused (net/http, httptest, the connect package).
func dropUnusedImports(path string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
				used[id.Name] = true
			}
		}
		return true
	})
	var edits []edit
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		kept := 0
		var drop []*ast.ImportSpec
		for _, spec := range gd.Specs {
			is := spec.(*ast.ImportSpec)
			p, _ := strconv.Unquote(is.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			if name == "_" || name == "." || used[name] || !droppable(p) {
				kept++
				continue
			}
			drop = append(drop, is)
		}
		if len(drop) == 0 {
			continue
		}
		if kept == 0 {
			edits = append(edits, lineEdit(fset, src, gd.Pos(), gd.End()))
			continue
		}
		for _, is := range drop {
			edits = append(edits, lineEdit(fset, src, is.Pos(), is.End()))
		}
	}
	if len(edits) == 0 {
		return src, nil
	}
	return apply(src, edits)
}

// droppable: only imports a rewrite can leave unused (a user's own unused import is a compile error we keep).
func droppable(path string) bool {
	return path == "net/http" || path == "net/http/httptest" || strings.HasSuffix(path, "connect")
}

func lineEdit(fset *token.FileSet, src []byte, from, to token.Pos) edit {
	start, end := fset.Position(from).Offset, fset.Position(to).Offset
	for start > 0 && src[start-1] != '\n' && (src[start-1] == ' ' || src[start-1] == '\t') {
		start--
	}
	if end < len(src) && src[end] == '\n' {
		end++
	}
	return edit{start, end, ""}
}
