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

// Command units runs upstream's node e2e suite where PID 1 is not systemd.
//
// The suite starts the kubelet with systemd-run as a transient unit and
// stops, kills and restarts it with systemctl, always through sudo
// (test/e2e_node/services/kubelet.go, test/e2e_node/util.go). On a machine
// without systemd those calls fail, and with them every test that restarts
// the kubelet or changes its configuration. Linked as systemd-run,
// systemctl and sudo into a directory put first on the suite's PATH, this
// command does what the suite asks of them, for the transient units it
// started itself, and nothing else:
//
//	systemd-run [-p StandardError=append:FILE] [--unit=NAME] [--remain-after-exit] CMD...
//	systemd-run --version
//	systemctl list-units PATTERN [--state=running]
//	systemctl kill|stop|start|restart|reset-failed|is-active NAME
//	sudo CMD...   (the suite runs as root: runs CMD)
//
// A unit's process runs under a keeper process of its own (a new session,
// so that it outlives the command that started it), which writes its pid
// and, when it exits, its exit status into the state directory
// ($UNITS_STATE_DIR, default /run/upstream-e2e/units). Anything else is an
// error naming what is not supported, never a silent success.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const keeperArg = "__units-keeper"

// stopTimeout is systemd's default TimeoutStopSec.
const stopTimeout = 90 * time.Second

type unit struct {
	Name string   `json:"name"`
	Argv []string `json:"argv"`
	Log  string   `json:"log,omitempty"`
}

func stateDir() string {
	if d := os.Getenv("UNITS_STATE_DIR"); d != "" {
		return d
	}
	return "/run/upstream-e2e/units"
}

func main() {
	var err error
	code := 0
	switch name := filepath.Base(os.Args[0]); {
	case len(os.Args) > 2 && os.Args[1] == keeperArg:
		err = keep(os.Args[2])
	case name == "sudo":
		err = sudo(os.Args[1:])
	case name == "systemd-run":
		err = systemdRun(os.Args[1:])
	case name == "systemctl":
		code, err = systemctl(os.Args[1:])
	default:
		err = fmt.Errorf("run me as systemd-run, systemctl or sudo (a link named so), not %q", name)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s (upstream-e2e units): %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
	os.Exit(code)
}

// sudo runs its command: the suite already runs as root.
func sudo(args []string) error {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] != "-n" && args[0] != "--non-interactive" && args[0] != "-E" {
			return fmt.Errorf("option %s is not supported", args[0])
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("no command")
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, args, os.Environ())
}

func systemdRun(args []string) error {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("systemd 252 (upstream-e2e units: systemd-run and systemctl for the node e2e suite)")
		return nil
	}
	u := unit{Name: fmt.Sprintf("run-%d.service", os.Getpid())}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opt, value, hasValue := strings.Cut(args[0], "=")
		takesValue := opt == "-p" || opt == "--property" || opt == "--unit" || opt == "--slice"
		if takesValue && !hasValue {
			if len(args) < 2 {
				return fmt.Errorf("%s needs a value", opt)
			}
			value, args = args[1], args[1:]
		}
		args = args[1:]
		switch opt {
		case "--unit":
			u.Name = value
			if !strings.Contains(value, ".") {
				u.Name += ".service"
			}
		case "-p", "--property":
			key, v, _ := strings.Cut(value, "=")
			switch key {
			case "StandardError", "StandardOutput":
				_, file, ok := strings.Cut(v, ":")
				if !ok || !(strings.HasPrefix(v, "append:") || strings.HasPrefix(v, "file:")) {
					return fmt.Errorf("property %s: only append:FILE and file:FILE are supported", value)
				}
				u.Log = file
			case "Delegate":
				// The keeper puts the unit in no cgroup; the kubelet makes its own.
			default:
				return fmt.Errorf("property %s is not supported", key)
			}
		case "--slice", "--remain-after-exit", "-r":
			// Units always remain listed until stopped.
		default:
			return fmt.Errorf("option %s is not supported", opt)
		}
	}
	if len(args) == 0 {
		return errors.New("no command to run")
	}
	u.Argv = args
	if running(u.Name) {
		return fmt.Errorf("unit %s is already running", u.Name)
	}
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(u)
	if err != nil {
		return err
	}
	if err := os.WriteFile(statePath(u.Name, "json"), data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "Running as unit: %s\n", u.Name)
	return start(u.Name)
}

func systemctl(args []string) (int, error) {
	var words []string
	state := ""
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--state="):
			state = strings.TrimPrefix(a, "--state=")
		case a == "--no-pager" || a == "--plain" || a == "--no-legend" || a == "--all" || a == "-a" || a == "--quiet" || a == "-q":
		case strings.HasPrefix(a, "-"):
			return 1, fmt.Errorf("option %s is not supported", a)
		default:
			words = append(words, a)
		}
	}
	if len(words) == 0 {
		return 1, errors.New("no command")
	}
	cmd, names := words[0], words[1:]
	if cmd == "list-units" {
		return 0, listUnits(names, state)
	}
	if cmd == "reset-failed" || cmd == "daemon-reload" {
		return 0, nil
	}
	if len(names) != 1 {
		return 1, fmt.Errorf("%s needs one unit", cmd)
	}
	name := names[0]
	if !strings.Contains(name, ".") {
		name += ".service"
	}
	if _, err := os.Stat(statePath(name, "json")); err != nil {
		return 5, fmt.Errorf("unit %s not loaded (only the units systemd-run started here are known)", name)
	}
	switch cmd {
	case "kill":
		return 0, signal(name, syscall.SIGTERM)
	case "stop":
		if err := stop(name); err != nil {
			return 1, err
		}
		for _, ext := range []string{"json", "exit"} {
			os.Remove(statePath(name, ext))
		}
		return 0, nil
	case "start":
		if running(name) {
			return 0, nil
		}
		return 0, start(name)
	case "restart":
		if err := stop(name); err != nil {
			return 1, err
		}
		return 0, start(name)
	case "is-active":
		if running(name) {
			fmt.Println("active")
			return 0, nil
		}
		fmt.Println("inactive")
		return 3, nil
	}
	return 1, fmt.Errorf("systemctl %s is not supported", cmd)
}

func listUnits(patterns []string, state string) error {
	if state != "" && state != "running" {
		return fmt.Errorf("--state=%s is not supported", state)
	}
	files, err := filepath.Glob(filepath.Join(stateDir(), "*.json"))
	if err != nil {
		return err
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		matched := len(patterns) == 0
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, name); ok {
				matched = true
			}
		}
		if !matched {
			continue
		}
		sub := "exited"
		if running(name) {
			sub = "running"
		} else if state == "running" {
			continue
		}
		fmt.Printf("%s loaded active %s %s\n", name, sub, name)
	}
	return nil
}

func statePath(name, ext string) string {
	return filepath.Join(stateDir(), name+"."+ext)
}

// start runs a keeper for the unit, in a session of its own, once the
// keeper of the unit's previous process, if any, has recorded its end.
func start(name string) error {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(statePath(name, "pid")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("unit %s: the keeper of its previous process did not record its end within 10s", name)
		}
	}
	os.Remove(statePath(name, "exit"))
	self, err := os.Executable()
	if err != nil {
		return err
	}
	keeper := exec.Command(self, keeperArg, name)
	keeper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := keeper.Start(); err != nil {
		return err
	}
	// The keeper writes the pid once the unit's process runs.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(statePath(name, "pid")); err == nil {
			return keeper.Process.Release()
		}
		if _, err := os.Stat(statePath(name, "exit")); err == nil {
			return keeper.Process.Release()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("unit %s: its process did not start within 10s", name)
}

// keep runs the unit's command, records its pid, waits for it and records
// how it ended.
func keep(name string) error {
	data, err := os.ReadFile(statePath(name, "json"))
	if err != nil {
		return err
	}
	var u unit
	if err := json.Unmarshal(data, &u); err != nil {
		return err
	}
	cmd := exec.Command(u.Argv[0], u.Argv[1:]...)
	if u.Log != "" {
		log, err := os.OpenFile(u.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer log.Close()
		cmd.Stdout, cmd.Stderr = log, log
	}
	if err := cmd.Start(); err != nil {
		os.WriteFile(statePath(name, "exit"), []byte(err.Error()+"\n"), 0o644)
		return err
	}
	if err := os.WriteFile(statePath(name, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		cmd.Process.Kill()
		return err
	}
	waitErr := cmd.Wait()
	status := "0"
	if waitErr != nil {
		status = waitErr.Error()
	}
	return recordExit(name, cmd.Process.Pid, status)
}

// recordExit records how the unit's process pid ended, unless the unit has
// been started again since: between the process's end and this record, a
// "systemctl start" sees no running process and starts a new keeper, whose
// pid file this keeper must not remove (the suite would then find no
// running kubelet, and the run's teardown would leave it running).
func recordExit(name string, pid int, status string) error {
	data, err := os.ReadFile(statePath(name, "pid"))
	if err != nil || strings.TrimSpace(string(data)) != strconv.Itoa(pid) {
		return nil
	}
	os.WriteFile(statePath(name, "exit"), []byte(status+"\n"), 0o644)
	return os.Remove(statePath(name, "pid"))
}

func pidOf(name string) (int, bool) {
	data, err := os.ReadFile(statePath(name, "pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The state follows the command name in parentheses; Z is a zombie.
	if i := strings.LastIndexByte(string(stat), ')'); i < 0 || strings.HasPrefix(string(stat[i+1:]), " Z") {
		return 0, false
	}
	return pid, true
}

func running(name string) bool {
	_, ok := pidOf(name)
	return ok
}

func signal(name string, sig syscall.Signal) error {
	pid, ok := pidOf(name)
	if !ok {
		return nil
	}
	return syscall.Kill(pid, sig)
}

// stop ends the unit's process: SIGTERM, then SIGKILL after stopTimeout,
// and waits for its keeper to record the end.
func stop(name string) error {
	pid, ok := pidOf(name)
	if !ok {
		return nil
	}
	syscall.Kill(pid, syscall.SIGTERM)
	killed := false
	deadline := time.Now().Add(stopTimeout)
	for {
		if _, err := os.Stat(statePath(name, "pid")); os.IsNotExist(err) {
			return nil
		}
		if time.Now().After(deadline) {
			if killed {
				return fmt.Errorf("unit %s: process %d did not end after SIGKILL", name, pid)
			}
			syscall.Kill(pid, syscall.SIGKILL)
			killed, deadline = true, time.Now().Add(10*time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
