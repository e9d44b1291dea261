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

// elfInterpreter returns the dynamic loader an ELF binary names in its
// first PT_INTERP program header, which is the one the kernel loads, or ""
// when it has none (statically linked).
func elfInterpreter(r io.ReaderAt) (string, error) {
	var ident [elf.EI_NIDENT]byte
	if _, err := r.ReadAt(ident[:], 0); err != nil {
		return "", err
	}
	var order binary.ByteOrder
	switch elf.Data(ident[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return "", errELFFormat
	}
	var (
		phoff             uint64
		phentsize, phnum  uint16
		wantPhentsize     uint16
		readProgramHeader func(off int64) (elf.ProgType, uint64, uint64, error)
	)
	header := io.NewSectionReader(r, 0, 1<<63-1)
	switch elf.Class(ident[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		var h elf.Header64
		if err := binary.Read(header, order, &h); err != nil {
			return "", err
		}
		phoff, phentsize, phnum, wantPhentsize = h.Phoff, h.Phentsize, h.Phnum, uint16(binary.Size(elf.Prog64{}))
		readProgramHeader = func(off int64) (elf.ProgType, uint64, uint64, error) {
			var p elf.Prog64
			err := binary.Read(io.NewSectionReader(r, off, int64(wantPhentsize)), order, &p)
			return elf.ProgType(p.Type), p.Off, p.Filesz, err
		}
	case elf.ELFCLASS32:
		var h elf.Header32
		if err := binary.Read(header, order, &h); err != nil {
			return "", err
		}
		phoff, phentsize, phnum, wantPhentsize = uint64(h.Phoff), h.Phentsize, h.Phnum, uint16(binary.Size(elf.Prog32{}))
		readProgramHeader = func(off int64) (elf.ProgType, uint64, uint64, error) {
			var p elf.Prog32
			err := binary.Read(io.NewSectionReader(r, off, int64(wantPhentsize)), order, &p)
			return elf.ProgType(p.Type), uint64(p.Off), uint64(p.Filesz), err
		}
	default:
		return "", errELFFormat
	}
	if phentsize != wantPhentsize || phnum == 0 || int(phnum)*int(phentsize) > maxProgramHeadersSize || phoff > 1<<62 {
		return "", errELFFormat
	}
	for i := range int64(phnum) {
		typ, off, size, err := readProgramHeader(int64(phoff) + i*int64(phentsize))
		if err != nil {
			return "", err
		}
		if typ != elf.PT_INTERP {
			continue
		}
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
