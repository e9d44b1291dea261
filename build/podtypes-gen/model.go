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
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// replacement is a type of k8s.io/apimachinery that the package declares
// by hand (quantity.go, time.go, ...) under name. A struct-like one has a
// decodeJSON method, written by hand too; UID is a string.
type replacement struct {
	name   string
	method bool
}

var replacements = map[string]replacement{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   {name: "Quantity", method: true},
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       {name: "Time", method: true},
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": {name: "IntOrString", method: true},
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   {name: "FieldsV1", method: true},
	"k8s.io/apimachinery/pkg/types.UID":               {name: "UID"},
}

// copiedPackages are the packages whose named types are declared again,
// under their own names.
var copiedPackages = map[string]bool{
	"k8s.io/api/core/v1":                   true,
	"k8s.io/apimachinery/pkg/apis/meta/v1": true,
}

// namedType is a type the package declares.
type namedType struct {
	t    reflect.Type
	name string
	// fields of a struct, in order, as the declaration has them.
	fields []reflect.StructField
	// members of a struct's JSON object, embedded structs' included.
	members []member
}

// member is one member of a struct's JSON object.
type member struct {
	name   string // the JSON key
	goPath string // the Go selector from the struct, such as ProbeHandler.Exec
	t      reflect.Type
}

// model is every type the roots reach.
type model struct {
	roots []reflect.Type
	named map[reflect.Type]*namedType
}

func walk(roots []any) (*model, error) {
	m := &model{named: map[reflect.Type]*namedType{}}
	for _, r := range roots {
		t := reflect.TypeOf(r)
		m.roots = append(m.roots, t)
		if err := m.add(t, t.String()); err != nil {
			return nil, err
		}
	}
	return m, nil
}

var jsonMethods = []reflect.Type{
	reflect.TypeFor[json.Marshaler](),
	reflect.TypeFor[json.Unmarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](),
	reflect.TypeFor[encoding.TextUnmarshaler](),
}

// add records t, reached by where (for errors), and what it reaches.
func (m *model) add(t reflect.Type, where string) error {
	if t.Name() != "" && t.PkgPath() != "" {
		if _, ok := replacements[qualified(t)]; ok {
			return nil
		}
		if _, ok := m.named[t]; ok {
			return nil
		}
		if !copiedPackages[t.PkgPath()] {
			return fmt.Errorf("%s: type %s of package %s: neither a copied package nor a replacement", where, t.Name(), t.PkgPath())
		}
		for _, i := range jsonMethods {
			if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
				return fmt.Errorf("%s: type %s has its own JSON methods (%s) and no replacement", where, qualified(t), i)
			}
		}
		n := &namedType{t: t, name: t.Name()}
		m.named[t] = n
		if t.Kind() == reflect.Struct {
			return m.addStruct(n, where)
		}
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int32, reflect.Int64, reflect.String:
		return nil
	case reflect.Pointer, reflect.Slice:
		return m.add(t.Elem(), where)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("%s: map key %s: only string keys are supported", where, t.Key())
		}
		if err := m.add(t.Key(), where); err != nil {
			return err
		}
		return m.add(t.Elem(), where)
	}
	return fmt.Errorf("%s: %s of kind %s is not supported", where, t, t.Kind())
}

func (m *model) addStruct(n *namedType, where string) error {
	for i := range n.t.NumField() {
		f := n.t.Field(i)
		if !f.IsExported() {
			return fmt.Errorf("%s.%s: unexported field", qualified(n.t), f.Name)
		}
		n.fields = append(n.fields, f)
		if err := m.add(f.Type, qualified(n.t)+"."+f.Name); err != nil {
			return err
		}
	}
	members, err := jsonMembers(n.t, "")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, mb := range members {
		if seen[mb.name] {
			return fmt.Errorf("%s: JSON member %q appears twice (encoding/json's dominance rules are not implemented)", qualified(n.t), mb.name)
		}
		seen[mb.name] = true
	}
	n.members = members
	return nil
}

// jsonMembers lists the members of t's JSON object as encoding/json sees
// them, the fields of embedded structs without a JSON name promoted.
func jsonMembers(t reflect.Type, prefix string) ([]member, error) {
	var out []member
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts := parseTag(f.Tag.Get("json"))
		if name == "-" && opts == "" {
			return nil, fmt.Errorf("%s.%s: json:\"-\" is not supported", qualified(t), f.Name)
		}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			// Options of encoding (which the fidelity test covers) or none.
			case "", "omitempty", "omitzero", "inline":
			default:
				return nil, fmt.Errorf("%s.%s: json option %q is not supported", qualified(t), f.Name, o)
			}
		}
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct || isReplacement(f.Type) {
				return nil, fmt.Errorf("%s.%s: only embedded structs are supported", qualified(t), f.Name)
			}
			inner, err := jsonMembers(f.Type, prefix+f.Name+".")
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, member{name: name, goPath: prefix + f.Name, t: f.Type})
	}
	return out, nil
}

func parseTag(tag string) (name, opts string) {
	name, opts, _ = strings.Cut(tag, ",")
	return name, opts
}

func qualified(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

func isReplacement(t reflect.Type) bool {
	_, ok := replacements[qualified(t)]
	return t.Name() != "" && ok
}

// sorted returns the named types by name.
func (m *model) sorted() []*namedType {
	out := make([]*namedType, 0, len(m.named))
	for _, n := range m.named {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// checkNames fails when two declarations of the package would have the
// same name: types of two packages, constants, hand-written code.
func (m *model) checkNames(handWritten map[string]string, consts []constant) error {
	owner := map[string]string{}
	claim := func(name, what string) error {
		if prev, ok := owner[name]; ok {
			return fmt.Errorf("%s and %s would both be declared as %s", prev, what, name)
		}
		owner[name] = what
		return nil
	}
	for name, file := range handWritten {
		if err := claim(name, "the hand-written "+file); err != nil {
			return err
		}
	}
	for _, r := range replacements {
		if _, ok := handWritten[r.name]; !ok {
			return fmt.Errorf("the replacement %s is not declared by hand", r.name)
		}
	}
	for _, n := range m.sorted() {
		if err := claim(n.name, qualified(n.t)); err != nil {
			return err
		}
	}
	for _, c := range consts {
		if err := claim(c.name, "the constant "+c.pkg+"."+c.name); err != nil {
			return err
		}
	}
	return nil
}

// typeExpr writes t in the package's terms.
func (m *model) typeExpr(t reflect.Type) string {
	return spell(t, func(t reflect.Type) string {
		if r, ok := replacements[qualified(t)]; ok && t.PkgPath() != "" {
			return r.name
		}
		return t.Name()
	})
}

// spell writes t, a named type or one built of them, with name writing
// each named type.
func spell(t reflect.Type, name func(reflect.Type) string) string {
	if t.Name() != "" {
		return name(t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + spell(t.Elem(), name)
	case reflect.Slice:
		return "[]" + spell(t.Elem(), name)
	case reflect.Map:
		return "map[" + spell(t.Key(), name) + "]" + spell(t.Elem(), name)
	}
	panic("unexpected type " + t.String())
}
