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
	"fmt"
	"sort"
	"strings"
)

// argList is a repeated flag: one argument each time, in order.
type argList []string

func (l *argList) String() string { return strings.Join(*l, " ") }

func (l *argList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// envList is a repeated NAME=VALUE flag.
type envList []string

func (l *envList) String() string { return strings.Join(*l, " ") }

func (l *envList) Set(kv string) error {
	if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
		return fmt.Errorf("-env %q: want NAME=VALUE", kv)
	}
	*l = append(*l, kv)
	return nil
}

// labelList is a repeated KEY=VALUE flag; a later KEY wins.
type labelList map[string]string

func (l *labelList) String() string {
	keys := make([]string, 0, len(*l))
	for k, v := range *l {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (l *labelList) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("-label %q: want KEY=VALUE", kv)
	}
	if *l == nil {
		*l = labelList{}
	}
	(*l)[k] = v
	return nil
}
