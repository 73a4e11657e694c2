// Command frameworkshapes reads Go source files with go/ast (no type checking, no build) and prints,
// per file, its package name, its imports and its top-level functions and methods with their lines:
// `framework project shapes` and `project graph` (docs/reference-project.md#project-shapes).
//
// Usage: frameworkshapes <root> <relative paths...>; one JSON object on stdout keyed by path.
// A file that does not parse gets an "error" and no functions.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
)

type Func struct {
	Name     string `json:"name"`
	Receiver string `json:"receiver,omitempty"`
	Line     int    `json:"line"`
	Params   int    `json:"params"`
}

type File struct {
	Package string   `json:"package"`
	Imports []string `json:"imports"`
	Funcs   []Func   `json:"funcs"`
	Error   string   `json:"error,omitempty"`
}

func receiver(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func read(root, rel string) File {
	fset := token.NewFileSet()
	node, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
	out := File{Imports: []string{}, Funcs: []Func{}}
	if node == nil {
		out.Error = err.Error()
		return out
	}
	if err != nil {
		out.Error = err.Error()
	}
	out.Package = node.Name.Name
	for _, imp := range node.Imports {
		if path, uerr := strconv.Unquote(imp.Path.Value); uerr == nil {
			out.Imports = append(out.Imports, path)
		}
	}
	for _, decl := range node.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		out.Funcs = append(out.Funcs, Func{Name: fn.Name.Name, Receiver: receiver(fn),
			Line: fset.Position(fn.Pos()).Line, Params: fn.Type.Params.NumFields()})
	}
	return out
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: frameworkshapes <root> <paths...>")
		os.Exit(2)
	}
	root := os.Args[1]
	result := map[string]File{}
	for _, rel := range os.Args[2:] {
		result[rel] = read(root, rel)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(result); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
