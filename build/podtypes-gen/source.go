/*
Copyright The podadmission Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// moduleVersions returns the versions this module builds with of mods,
// replacements included, as the go command resolves them.
func moduleVersions(mods ...string) (map[string]string, error) {
	out, err := goList(append([]string{"-m", "-f", "{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}"}, mods...)...)
	if err != nil {
		return nil, err
	}
	versions := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		path, version, _ := strings.Cut(line, " ")
		versions[path] = version
	}
	for _, mod := range mods {
		if versions[mod] == "" {
			return nil, fmt.Errorf("go list -m %s: no version", mod)
		}
	}
	return versions, nil
}

func goList(args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list %s: %v: %s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out), nil
}

// constant is a typed constant of a type the package declares, as its
// package's source declares it.
type constant struct {
	pkg, name, typ, value string
}

// typedConstants returns the constants declared with the type of one of
// m's named types and a literal value, in their packages' source order:
// the values a plugin compares fields with (RestartPolicyAlways,
// ResourceCPU, ...).
func typedConstants(m *model) ([]constant, error) {
	byPkg := map[string]map[string]bool{}
	for _, n := range m.named {
		if byPkg[n.t.PkgPath()] == nil {
			byPkg[n.t.PkgPath()] = map[string]bool{}
		}
		byPkg[n.t.PkgPath()][n.name] = true
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var out []constant
	for _, pkg := range pkgs {
		dir, err := goList("-f", "{{.Dir}}", pkg)
		if err != nil {
			return nil, err
		}
		files, err := filepath.Glob(filepath.Join(strings.TrimSpace(dir), "*.go"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			out = append(out, constantsOf(f, pkg, byPkg[pkg])...)
		}
	}
	return out, nil
}

func constantsOf(f *ast.File, pkg string, types map[string]bool) []constant {
	var out []constant
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			typ, ok := vs.Type.(*ast.Ident)
			if !ok || !types[typ.Name] || len(vs.Values) != len(vs.Names) {
				continue
			}
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || !name.IsExported() || (lit.Kind != token.STRING && lit.Kind != token.INT) {
					continue
				}
				out = append(out, constant{pkg: pkg, name: name.Name, typ: typ.Name, value: lit.Value})
			}
		}
	}
	return out
}

// declaredNames returns the top-level names the hand-written files of the
// package in dir declare, and the file of each.
func declaredNames(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, file := range files {
		base := filepath.Base(file)
		if strings.HasPrefix(base, "zz_generated.") || strings.HasSuffix(base, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = base
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = base
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = base
						}
					}
				}
			}
		}
	}
	return names, nil
}
