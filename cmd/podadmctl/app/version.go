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
