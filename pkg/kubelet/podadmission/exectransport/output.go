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

package exectransport

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
)

// errOutputLimit stops the copy of a plugin's stdout once it exceeds the
// limit; the process is then killed rather than read to the end.
var errOutputLimit = errors.New("output limit exceeded")

// cappedBuffer keeps up to max bytes and reports, once, when more arrive.
// os/exec writes to it from one goroutine; exceeded is read after Wait.
type cappedBuffer struct {
	max      int
	buf      []byte
	once     sync.Once
	exceeded chan struct{}
}

func newCappedBuffer(max int) *cappedBuffer {
	return &cappedBuffer{max: max, exceeded: make(chan struct{})}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if len(b.buf)+len(p) > b.max {
		b.once.Do(func() { close(b.exceeded) })
		return 0, errOutputLimit
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// overflowed reports whether more than max bytes were written.
func (b *cappedBuffer) overflowed() bool {
	select {
	case <-b.exceeded:
		return true
	default:
		return false
	}
}

// tailBuffer keeps the last max bytes written to it: the end of a plugin's
// stderr is where the error usually is.
type tailBuffer struct {
	max       int
	buf       []byte
	truncated bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if n >= b.max {
		b.buf = append(b.buf[:0], p[n-b.max:]...)
		b.truncated = true
		return n, nil
	}
	if overflow := len(b.buf) + n - b.max; overflow > 0 {
		b.buf = append(b.buf[:0], b.buf[overflow:]...)
		b.truncated = true
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// empty reports whether nothing but white space was written.
func (b *tailBuffer) empty() bool {
	return len(bytes.TrimSpace(b.buf)) == 0
}

// quoted returns the kept stderr quoted for an error message, without its
// trailing newline, marked with a leading "..." when its beginning was
// dropped.
func (b *tailBuffer) quoted() string {
	s := string(bytes.TrimRight(b.buf, " \t\r\n"))
	if b.truncated {
		s = "..." + s
	}
	return strconv.Quote(s)
}
