// Reads Go file paths from stdin, one a line, and prints one line per function or function literal:
// "path<TAB>startLine<TAB>endLine<TAB>name". Read by scripts/size-scan; parses with go/ast so that
// braces in strings and comments do not count.
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
)

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	paths := bufio.NewScanner(os.Stdin)
	for paths.Scan() {
		path := paths.Text()
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintf(os.Stderr, "size-scan: %v\n", err)
			os.Exit(2)
		}
		for _, fn := range funcs(file) {
			start, end := fset.Position(fn.node.Pos()).Line, fset.Position(fn.node.End()).Line
			fmt.Fprintf(out, "%s\t%d\t%d\t%s\n", path, start, end, fn.name)
		}
	}
}

type namedFunc struct {
	node ast.Node
	name string
}

// funcs lists declarations and literals; a literal is named after what it is assigned to, or the call
// that receives it (t.Run("case", func...) -> t.Run("case")).
func funcs(file *ast.File) []namedFunc {
	var found []namedFunc
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		switch fn := n.(type) {
		case *ast.FuncDecl:
			found = append(found, namedFunc{fn, declName(fn)})
		case *ast.FuncLit:
			found = append(found, namedFunc{fn, litName(stack)})
		}
		stack = append(stack, n)
		return true
	})
	return found
}

func declName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if index, ok := recv.(*ast.IndexExpr); ok {
		recv = index.X
	}
	if ident, ok := recv.(*ast.Ident); ok {
		return ident.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func litName(stack []ast.Node) string {
	if len(stack) == 0 {
		return "func literal"
	}
	switch parent := stack[len(stack)-1].(type) {
	case *ast.AssignStmt:
		if ident, ok := parent.Lhs[0].(*ast.Ident); ok {
			return ident.Name
		}
	case *ast.ValueSpec:
		return parent.Names[0].Name
	case *ast.CallExpr:
		return "callback of " + callName(parent)
	case *ast.KeyValueExpr:
		if ident, ok := parent.Key.(*ast.Ident); ok {
			return ident.Name
		}
	}
	return "func literal"
}

func callName(call *ast.CallExpr) string {
	name := exprName(call.Fun)
	if len(call.Args) > 0 {
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if text, err := strconv.Unquote(lit.Value); err == nil {
				return name + "(" + strconv.Quote(text) + ")"
			}
		}
	}
	return name
}

func exprName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprName(e.X) + "." + e.Sel.Name
	}
	return "call"
}
