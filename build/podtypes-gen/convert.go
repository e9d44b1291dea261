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
	"go/format"
	"path"
	"reflect"
	"sort"
	"strings"
)

// sdkImport is the package the types file is written to, which the
// conversion converts from; sdkName is the name it imports it as.
const (
	sdkImport = "github.com/podadmission/podadmission/pkg/plugin/corev1"
	sdkName   = "sdk"
)

// importNames are the names the conversion imports upstream's packages as:
// those of copiedPackages and of the replacements.
var importNames = map[string]string{
	"k8s.io/api/core/v1":                   "corev1",
	"k8s.io/apimachinery/pkg/apis/meta/v1": "metav1",
	"k8s.io/apimachinery/pkg/api/resource": "resource",
	"k8s.io/apimachinery/pkg/types":        "types",
	"k8s.io/apimachinery/pkg/util/intstr":  "intstr",
}

// converter writes the conversion file: for every struct, map and slice
// type the root reaches, a function that converts the SDK's value of it
// into upstream's type.
//
// A struct's function fills the zero value its out points to; a map's or
// a slice's returns a new one, nil for nil and empty for empty. What a
// pointer, map or slice holds is allocated anew, so the result shares no
// memory with the SDK's value (strings aside, which cannot change). The
// replacements are converted by hand-written functions named convert and
// the replacement's name, taking pointers to the SDK's value and to
// upstream's, but for the string UID.
type converter struct {
	m       *model
	b       bytes.Buffer
	imports map[string]bool
	queued  map[reflect.Type]bool
	pending []reflect.Type
	funcs   []string
}

// convertFile writes the conversion of root, one of m's roots, for a
// package whose hand-written files declare handWritten.
func (m *model) convertFile(header []byte, origin string, root reflect.Type, handWritten map[string]string) ([]byte, error) {
	if m.named[root] == nil || root.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct the types reach", root)
	}
	if err := checkConversionNeeds(m, handWritten); err != nil {
		return nil, err
	}
	c := &converter{m: m, imports: map[string]bool{sdkImport: true}, queued: map[reflect.Type]bool{}}
	c.function(root)
	for len(c.pending) > 0 {
		t := c.pending[0]
		c.pending = c.pending[1:]
		c.write(t)
	}
	for _, name := range c.funcs {
		if file, ok := handWritten[name]; ok {
			return nil, fmt.Errorf("%s would be declared by the conversion and by the hand-written %s", name, file)
		}
	}
	b := prologue(header, origin, "corepod")
	c.writeImports(b)
	b.Write(c.b.Bytes())
	return format.Source(b.Bytes())
}

// checkConversionNeeds fails when the conversion could not name a package
// the types come from, or when a replacement it converts by hand has no
// function.
func checkConversionNeeds(m *model, handWritten map[string]string) error {
	for _, n := range m.sorted() {
		if importNames[n.t.PkgPath()] == "" {
			return fmt.Errorf("%s: no import name for package %s (importNames)", n.name, n.t.PkgPath())
		}
	}
	quals := make([]string, 0, len(replacements))
	for q := range replacements {
		quals = append(quals, q)
	}
	sort.Strings(quals)
	for _, q := range quals {
		pkg := q[:strings.LastIndex(q, ".")]
		if importNames[pkg] == "" {
			return fmt.Errorf("%s: no import name for package %s (importNames)", q, pkg)
		}
		if r := replacements[q]; r.method {
			if _, ok := handWritten["convert"+r.name]; !ok {
				return fmt.Errorf("the replacement %s has no hand-written convert%s", r.name, r.name)
			}
		}
	}
	return nil
}

// function returns the name of t's conversion function, which is written
// once t's turn comes.
func (c *converter) function(t reflect.Type) string {
	if !c.queued[t] {
		c.queued[t] = true
		c.pending = append(c.pending, t)
	}
	return "convert" + ident(c.m, t)
}

func (c *converter) write(t reflect.Type) {
	name := "convert" + ident(c.m, t)
	c.funcs = append(c.funcs, name)
	in, out := c.sdk(t), c.upstream(t)
	switch t.Kind() {
	case reflect.Struct:
		fmt.Fprintf(&c.b, "func %s(in *%s, out *%s) {\n", name, in, out)
		for _, f := range c.m.named[t].fields {
			c.b.WriteString(c.convertInto(f.Type, "in."+f.Name, "out."+f.Name))
		}
	case reflect.Slice:
		fmt.Fprintf(&c.b, "func %s(in %s) %s {\n\tif in == nil {\n\t\treturn nil\n\t}\n\tout := make(%s, len(in))\n", name, in, out, out)
		if e := t.Elem(); e.PkgPath() == "" && isScalar(e) {
			c.b.WriteString("\tcopy(out, in)\n")
		} else {
			c.b.WriteString("\tfor i := range in {\n")
			c.b.WriteString(c.convertInto(e, "in[i]", "out[i]"))
			c.b.WriteString("\t}\n")
		}
		c.b.WriteString("\treturn out\n")
	case reflect.Map:
		fmt.Fprintf(&c.b, "func %s(in %s) %s {\n\tif in == nil {\n\t\treturn nil\n\t}\n\tout := make(%s, len(in))\n", name, in, out, out)
		key, _ := c.scalar(t.Key(), "k")
		c.b.WriteString("\tfor k, v := range in {\n")
		if value, ok := c.value(t.Elem(), "v"); ok {
			fmt.Fprintf(&c.b, "\t\tout[%s] = %s\n", key, value)
		} else {
			fmt.Fprintf(&c.b, "\t\tvar e %s\n", c.upstream(t.Elem()))
			c.b.WriteString(c.convertInto(t.Elem(), "v", "e"))
			fmt.Fprintf(&c.b, "\t\tout[%s] = e\n", key)
		}
		c.b.WriteString("\t}\n\treturn out\n")
	default:
		panic("no conversion function for " + t.String())
	}
	c.b.WriteString("}\n\n")
}

// convertInto returns the statements that convert in, an addressable
// expression of the SDK's type for t, into out, the same of t, which holds
// t's zero value.
func (c *converter) convertInto(t reflect.Type, in, out string) string {
	if value, ok := c.value(t, in); ok {
		return fmt.Sprintf("%s = %s\n", out, value)
	}
	if r, ok := replacements[qualified(t)]; ok && t.PkgPath() != "" {
		return fmt.Sprintf("convert%s(%s, %s)\n", r.name, addressOf(in), addressOf(out))
	}
	switch t.Kind() {
	case reflect.Struct:
		return fmt.Sprintf("%s(%s, %s)\n", c.function(t), addressOf(in), addressOf(out))
	case reflect.Pointer:
		return fmt.Sprintf("if %s != nil {\n%s = new(%s)\n%s}\n", in, out, c.upstream(t.Elem()), c.convertInto(t.Elem(), "*"+in, "*"+out))
	}
	panic("unexpected type " + t.String())
}

// value returns the expression of in converted, for a t that converts
// by value: a scalar, a slice or a map.
func (c *converter) value(t reflect.Type, in string) (string, bool) {
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		return c.function(t) + "(" + in + ")", true
	}
	return c.scalar(t, in)
}

// scalar returns in, a bool, integer or string (UID among them), as a
// value of upstream's type for t.
func (c *converter) scalar(t reflect.Type, in string) (string, bool) {
	if !isScalar(t) {
		return "", false
	}
	if t.PkgPath() == "" {
		return in, true
	}
	return c.upstream(t) + "(" + in + ")", true
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int32, reflect.Int64, reflect.String:
		return true
	}
	return false
}

// addressOf writes &x, and p for *p.
func addressOf(x string) string {
	if p, ok := strings.CutPrefix(x, "*"); ok {
		return p
	}
	return "&" + x
}

// upstream writes t as k8s.io/api and k8s.io/apimachinery declare it.
func (c *converter) upstream(t reflect.Type) string {
	return spell(t, func(t reflect.Type) string {
		if t.PkgPath() == "" {
			return t.Name()
		}
		c.imports[t.PkgPath()] = true
		return importNames[t.PkgPath()] + "." + t.Name()
	})
}

// sdk writes t as the types file declares it.
func (c *converter) sdk(t reflect.Type) string {
	return spell(t, func(t reflect.Type) string {
		if t.PkgPath() == "" {
			return t.Name()
		}
		return sdkName + "." + c.m.typeExpr(t)
	})
}

// writeImports writes the import declaration: upstream's packages, then
// the SDK's.
func (c *converter) writeImports(b *bytes.Buffer) {
	var upstream []string
	for p := range c.imports {
		if p != sdkImport {
			upstream = append(upstream, p)
		}
	}
	sort.Strings(upstream)
	b.WriteString("import (\n")
	for _, p := range upstream {
		if name := importNames[p]; name != path.Base(p) {
			fmt.Fprintf(b, "%s ", name)
		}
		fmt.Fprintf(b, "%q\n", p)
	}
	fmt.Fprintf(b, "\n%s %q\n)\n\n", sdkName, sdkImport)
}
