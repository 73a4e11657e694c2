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
