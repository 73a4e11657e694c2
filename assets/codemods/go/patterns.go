// The three hand-rolled styles and what stops a file: a server of its own, a handler variable called directly,
// an inline call; anything left that serves the handler (docs/reference-project.md#files-left-alone).

package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

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
	var muxDecl, handle, pair ast.Stmt
	var handlerCall *ast.CallExpr
	var pairIDs []*ast.Ident // path, handler := x.New<Svc>Handler(h); mux.Handle(path, handler): connect's own idiom
	for _, other := range block.List {
		if as, ok := other.(*ast.AssignStmt); ok && as.Tok == token.DEFINE && len(as.Lhs) == 2 && len(as.Rhs) == 1 {
			p, okP := as.Lhs[0].(*ast.Ident)
			h, okH := as.Lhs[1].(*ast.Ident)
			if hc, ok := selectorCall(as.Rhs[0], handlerName); ok && okP && okH && p.Obj != nil && h.Obj != nil {
				pair, pairIDs, handlerCall = other, []*ast.Ident{p, h}, hc
			}
		}
	}
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
			if c, ok := selectorCall(es.X, "Handle"); ok && pair != nil && isIdentOf(c.Fun.(*ast.SelectorExpr).X, muxID.Obj) &&
				len(c.Args) == 2 && isIdentOf(c.Args[0], pairIDs[0].Obj) && isIdentOf(c.Args[1], pairIDs[1].Obj) {
				handle = other
			}
		}
	}
	if handle != nil && pair != nil && len(handle.(*ast.ExprStmt).X.(*ast.CallExpr).Args) == 2 {
		for _, id := range pairIDs {
			if len(uses[id.Obj]) != 2 {
				m.fail(id.Pos(), fmt.Sprintf("%s: the handler's %s is used beyond the test's mux", fn, id.Name))
				return
			}
		}
	} else {
		pair = nil
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
	if pair != nil {
		m.deleteStmt(pair)
	}
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
