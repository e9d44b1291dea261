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

package trust

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
)

// shebangInterpreter returns the interpreter a #! line names, parsed the
// way the kernel parses it (fs/binfmt_script.c load_script) from header,
// the first binprmBufSize bytes of the file: after "#!" and spaces or
// tabs, everything up to a space, tab, NUL or the end of the line. ok is
// false when the kernel would not run the file as a script: no "#!", no
// interpreter name, or a line longer than the buffer whose interpreter
// name may be cut (the kernel says ENOEXEC then).
func shebangInterpreter(header []byte) (interpreter string, ok bool) {
	if len(header) < 2 || header[0] != '#' || header[1] != '!' {
		return "", false
	}
	line := header[2:]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	name := bytes.TrimLeft(line, " \t")
	end := bytes.IndexAny(name, " \t\x00")
	switch {
	case end >= 0:
		name = name[:end]
	case len(header) == binprmBufSize && len(line) == len(header)-2:
		// No newline, no terminator in the whole buffer: the kernel
		// cannot tell where the name ends and refuses the file. A
		// shorter file ends the line at its end (the kernel's buffer is
		// padded with NULs).
		return "", false
	}
	if len(name) == 0 {
		return "", false
	}
	return string(name), true
}

// isELF says whether header starts with the ELF magic.
func isELF(header []byte) bool {
	return bytes.HasPrefix(header, []byte(elf.ELFMAG))
}

// The kernel's limits on the program headers it reads
// (fs/binfmt_elf.c load_elf_phdrs) and on the loader's name
// (load_elf_binary: PATH_MAX).
const (
	maxProgramHeadersSize = 64 << 10
	maxInterpreterSize    = 4096
)

// errELFFormat is an ELF file whose program headers the kernel would not
// read as they are here; it is refused rather than guessed at.
var errELFFormat = errors.New("not an ELF file the kernel loads")

// Where the fields elfInterpreter reads are, in the ELF header and in a
// program header, for each class (elf.Header64, elf.Prog64, elf.Header32,
// elf.Prog32).
type elfLayout struct {
	headerSize, phoff, phoffSize, phentsize, phnum int
	progSize, progOff, progFilesz, wordSize        int
}

var (
	elf64Layout = elfLayout{headerSize: 64, phoff: 32, phoffSize: 8, phentsize: 54, phnum: 56, progSize: 56, progOff: 8, progFilesz: 32, wordSize: 8}
	elf32Layout = elfLayout{headerSize: 52, phoff: 28, phoffSize: 4, phentsize: 42, phnum: 44, progSize: 32, progOff: 4, progFilesz: 16, wordSize: 4}
)

// elfInterpreter returns the dynamic loader an ELF binary names in its
// first PT_INTERP program header, which is the one the kernel loads, or ""
// when it has none (statically linked). It reads the header and the
// program headers with one read each: it runs before every call.
func elfInterpreter(r io.ReaderAt) (string, error) {
	header := make([]byte, elf64Layout.headerSize)
	if _, err := r.ReadAt(header, 0); err != nil && !(errors.Is(err, io.EOF) && isELF(header)) {
		return "", err
	}
	var order binary.ByteOrder
	switch elf.Data(header[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return "", errELFFormat
	}
	var l elfLayout
	switch elf.Class(header[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		l = elf64Layout
	case elf.ELFCLASS32:
		l = elf32Layout
	default:
		return "", errELFFormat
	}
	word := func(b []byte, off, size int) uint64 {
		if size == 8 {
			return order.Uint64(b[off:])
		}
		return uint64(order.Uint32(b[off:]))
	}
	phoff := word(header, l.phoff, l.phoffSize)
	phentsize := int(order.Uint16(header[l.phentsize:]))
	phnum := int(order.Uint16(header[l.phnum:]))
	if phentsize != l.progSize || phnum == 0 || phnum*phentsize > maxProgramHeadersSize || phoff > 1<<62 {
		return "", errELFFormat
	}
	progs := make([]byte, phnum*phentsize)
	if _, err := r.ReadAt(progs, int64(phoff)); err != nil {
		return "", err
	}
	for i := range phnum {
		prog := progs[i*phentsize:]
		if elf.ProgType(order.Uint32(prog)) != elf.PT_INTERP {
			continue
		}
		off, size := word(prog, l.progOff, l.wordSize), word(prog, l.progFilesz, l.wordSize)
		if size < 2 || size > maxInterpreterSize || off > 1<<62 {
			return "", errELFFormat
		}
		name := make([]byte, size)
		if _, err := r.ReadAt(name, int64(off)); err != nil {
			return "", err
		}
		// The kernel wants a NUL at the end and uses the name up to the
		// first NUL.
		if name[size-1] != 0 || name[0] == 0 {
			return "", errELFFormat
		}
		return string(name[:bytes.IndexByte(name, 0)]), nil
	}
	return "", nil
}
