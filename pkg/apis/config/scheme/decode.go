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

package scheme

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/podadmission/podadmission/pkg/apis/config/v1alpha1"
	"github.com/podadmission/podadmission/pkg/util/yamldoc"
)

// Kind is the kind of a pod admission configuration file.
const Kind = "PodAdmissionConfiguration"

// Decode decodes one configuration file, YAML or JSON, strictly and returns
// it with defaults applied. It does not validate field values (package
// validation does) but every error it returns names the field or line at
// fault; several errors come as a utilerrors.Aggregate of field errors.
func Decode(data []byte) (*configv1alpha1.PodAdmissionConfiguration, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, err
	}
	if errs := checkTypeMeta(doc); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	// The codec reports a malformed duration without its field; find it
	// first so the error says which one.
	if errs := checkDurations(doc); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	obj, _, err := Codecs.UniversalDeserializer().Decode(doc, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*configv1alpha1.PodAdmissionConfiguration)
	if !ok {
		return nil, fmt.Errorf("decoded %T, want *PodAdmissionConfiguration", obj)
	}
	Scheme.Default(cfg)
	return cfg, nil
}

// singleDocument returns the one YAML document in data. A second document
// would otherwise be ignored silently, with the plugins it lists.
func singleDocument(data []byte) ([]byte, error) {
	docs, err := yamldoc.NonEmpty(data)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, fmt.Errorf("no %s in the file: it is empty or holds only comments", Kind)
	case 1:
		return docs[0], nil
	default:
		return nil, fmt.Errorf("%d YAML documents in the file: it must hold exactly one %s", len(docs), Kind)
	}
}

// checkTypeMeta says what is wrong with apiVersion and kind in terms of the
// supported values, instead of the scheme's "no kind is registered".
func checkTypeMeta(doc []byte) field.ErrorList {
	var typeMeta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &typeMeta); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("apiVersion"), "", fmt.Sprintf("cannot read apiVersion and kind: %v", err))}
	}
	var errs field.ErrorList
	want := configv1alpha1.SchemeGroupVersion.String()
	switch typeMeta.APIVersion {
	case want:
	case "":
		errs = append(errs, field.Required(field.NewPath("apiVersion"), fmt.Sprintf("must be %q", want)))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), typeMeta.APIVersion, []string{want}))
	}
	switch typeMeta.Kind {
	case Kind:
	case "":
		errs = append(errs, field.Required(field.NewPath("kind"), fmt.Sprintf("must be %q", Kind)))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("kind"), typeMeta.Kind, []string{Kind}))
	}
	return errs
}

// checkDurations parses every duration field on its own, so that a bad one
// is reported with its field path.
func checkDurations(doc []byte) field.ErrorList {
	var durations struct {
		Plugins []struct {
			Timeout            json.RawMessage `json:"timeout"`
			MaxBlockedDuration json.RawMessage `json:"maxBlockedDuration"`
		} `json:"plugins"`
	}
	// Anything this lenient read cannot handle is reported by the strict
	// decoder afterwards.
	if err := yaml.Unmarshal(doc, &durations); err != nil {
		return nil
	}
	var errs field.ErrorList
	for i, p := range durations.Plugins {
		path := field.NewPath("plugins").Index(i)
		errs = append(errs, checkDuration(path.Child("timeout"), p.Timeout)...)
		errs = append(errs, checkDuration(path.Child("maxBlockedDuration"), p.MaxBlockedDuration)...)
	}
	return errs
}

func checkDuration(path *field.Path, raw json.RawMessage) field.ErrorList {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return field.ErrorList{field.Invalid(path, string(raw), `must be a duration string such as "5s"`)}
	}
	if _, err := time.ParseDuration(s); err != nil {
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf(`must be a duration such as "5s": %v`, err))}
	}
	return nil
}
