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

package trusttest

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
)

// CopyWithLoader copies src, a dynamically linked 64-bit little-endian ELF
// binary (such as /bin/sh), to dst with mode 0755, naming loader as its
// dynamic loader: the new name is appended to the file and its PT_INTERP
// program header points at it. The kernel reads the loader's name through
// that header, so executing dst runs loader first.
func CopyWithLoader(src, dst, loader string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := elf.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return fmt.Errorf("%s: not a 64-bit little-endian ELF file", src)
	}
	phoff := binary.LittleEndian.Uint64(data[32:40])
	phentsize := uint64(binary.LittleEndian.Uint16(data[54:56]))
	for i, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		header := phoff + uint64(i)*phentsize
		name := append([]byte(loader), 0)
		// Prog64: Type, Flags (4 bytes each), then Off, Vaddr, Paddr,
		// Filesz, Memsz, Align (8 bytes each).
		binary.LittleEndian.PutUint64(data[header+8:], uint64(len(data)))
		binary.LittleEndian.PutUint64(data[header+32:], uint64(len(name)))
		binary.LittleEndian.PutUint64(data[header+40:], uint64(len(name)))
		data = append(data, name...)
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return err
		}
		return os.Chmod(dst, 0o755)
	}
	return fmt.Errorf("%s: not dynamically linked (no PT_INTERP)", src)
}
