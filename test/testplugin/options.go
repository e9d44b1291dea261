package main

import (
	"flag"
	"fmt"
	"time"
)

// Modes of the test plugin; see the package documentation.
const (
	modeAllow           = "allow"
	modeDeny            = "deny"
	modeSleep           = "sleep"
	modeCrash           = "crash"
	modeGarbage         = "garbage"
	modeHuge            = "huge"
	modeWrongAPIVersion = "wrong-api-version"
	modeForkSleep       = "fork-sleep"
)

var modes = []string{modeAllow, modeDeny, modeSleep, modeCrash, modeGarbage, modeHuge, modeWrongAPIVersion, modeForkSleep}

type options struct {
	mode         string
	reason       string
	message      string
	retryAfter   time.Duration
	decisionFile string
	logFile      string
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.mode, "mode", modeAllow, fmt.Sprintf("behaviour, one of %v", modes))
	fs.StringVar(&o.reason, "reason", "DeniedByTestPlugin", "reason of a rejection")
	fs.StringVar(&o.message, "message", "the test plugin denies this pod", "message of a rejection")
	fs.DurationVar(&o.retryAfter, "retry-after", 0, "retryAfterSeconds of a rejection (rounded up to seconds; 0: unset)")
	fs.StringVar(&o.decisionFile, "decision-file", "", `file read at every call: "allow" or "deny <Reason> <message>"; overrides --mode`)
	fs.StringVar(&o.logFile, "log-file", "", "file to append one line to per call")
}

func (o *options) validate() error {
	for _, m := range modes {
		if o.mode == m {
			return nil
		}
	}
	return fmt.Errorf("unknown --mode %q, want one of %v", o.mode, modes)
}
