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

package app

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version"
)

func newVersionCommand(s streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of podadmctl (the kubelet release it belongs to)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			// The build stamps k8s.io/component-base/version, as it does
			// for the kubelet, so both report the same release.
			info := version.Get()
			switch output {
			case "json":
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			case "":
				_, err := fmt.Fprintf(s.out, "podadmctl %s (commit %s, tree %s, built %s, %s, %s)\n",
					info.GitVersion, info.GitCommit, info.GitTreeState, info.BuildDate, info.GoVersion, info.Platform)
				return err
			}
			return usageError(fmt.Errorf("--output %q: want json, or nothing for one line", output))
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}
