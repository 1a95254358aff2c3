package sandbox

import "encoding/binary"

// ELF constants the loader test reads (elf(5)).
const (
	elfTypeDyn    = 3  // ET_DYN
	elfPTDynamic  = 2  // PT_DYNAMIC
	elfPTInterp   = 3  // PT_INTERP
	elfDTNull     = 0  // DT_NULL
	elfDTSoname   = 14 // DT_SONAME
	elfMaxPhdrs   = 4096
	elfMaxDynamic = 16 << 10
)

// isLoaderELF reports whether a file whose first bytes are head (the
// kernel's zero-filled BINPRM_BUF_SIZE buffer) is a dynamic loader run as
// a program: an ELF shared object (ET_DYN) with no PT_INTERP whose
// dynamic section names itself (DT_SONAME). readAt reads the rest of the
// file where head is too short.
//
// The rule is what the file is, not what it is called: the kernel runs an
// ET_DYN without PT_INTERP by jumping to its own entry, and the shared
// objects that then load another program given as an argument are the
// loaders (glibc's ld-linux*.so, i386 and x32 included; musl's libc.so,
// also called ld-musl-*.so.1). The other executables of that shape,
// static-PIE programs (gcc -static-pie, Rust's musl targets), have no
// DT_SONAME; glibc's libc.so.6, which runs as a program too, has a
// PT_INTERP. A copy, hard link or rename of a loader keeps all of it (its
// bytes). The machine is not checked: a foreign loader run through
// binfmt_misc (qemu) loads its operand just the same. A program headers'
// table or dynamic section that cannot be read, or one longer than read
// here, counts as a loader: its operand is checked, which costs nothing
// but a check.
func isLoaderELF(head []byte, readAt func(b []byte, off int64) (int, error)) bool {
	if len(head) < 64 || string(head[:4]) != "\x7fELF" {
		return false
	}
	var bo binary.ByteOrder
	switch head[5] {
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return false
	}
	if bo.Uint16(head[16:]) != elfTypeDyn {
		return false
	}
	var phoff uint64
	var phentsize, phnum int
	is64 := false
	switch head[4] {
	case 1:
		phoff, phentsize, phnum = uint64(bo.Uint32(head[28:])), int(bo.Uint16(head[42:])), int(bo.Uint16(head[44:]))
	case 2:
		is64 = true
		phoff, phentsize, phnum = bo.Uint64(head[32:]), int(bo.Uint16(head[54:])), int(bo.Uint16(head[56:]))
	default:
		return false
	}
	// The kernel runs only tables of its own entry size, at most a page
	// (binfmt_elf's elf_read_phdrs): anything else does not execute.
	want := 32
	if is64 {
		want = 56
	}
	size := phentsize * phnum
	if phentsize != want || phnum == 0 || size > elfMaxPhdrs {
		return false
	}
	table, ok := readRange(head, readAt, phoff, uint64(size))
	if !ok {
		return true
	}
	var dynOff, dynSize uint64
	found := false
	for i := 0; i < phnum; i++ {
		ph := table[i*phentsize:]
		switch bo.Uint32(ph) {
		case elfPTInterp:
			return false
		case elfPTDynamic:
			if is64 {
				dynOff, dynSize = bo.Uint64(ph[8:]), bo.Uint64(ph[32:])
			} else {
				dynOff, dynSize = uint64(bo.Uint32(ph[4:])), uint64(bo.Uint32(ph[16:]))
			}
			found = true
		}
	}
	if !found {
		return false // nothing to relocate itself with: no loader
	}
	n := min(dynSize, elfMaxDynamic)
	dyn, ok := readRange(head, readAt, dynOff, n)
	if !ok {
		return true
	}
	ent := 8
	if is64 {
		ent = 16
	}
	for i := 0; i+ent <= len(dyn); i += ent {
		var tag int64
		if is64 {
			tag = int64(bo.Uint64(dyn[i:]))
		} else {
			tag = int64(int32(bo.Uint32(dyn[i:])))
		}
		switch tag {
		case elfDTSoname:
			return true
		case elfDTNull:
			return false
		}
	}
	return dynSize > n // not all of it read: cannot tell
}

// readRange returns n bytes of a file at off: from head when they are
// in it, else from readAt; ok is false when they cannot all be read.
func readRange(head []byte, readAt func([]byte, int64) (int, error), off, n uint64) ([]byte, bool) {
	if off > 1<<62 || n > 1<<30 {
		return nil, false
	}
	if off+n <= uint64(len(head)) {
		return head[off : off+n], true
	}
	b := make([]byte, n)
	got := 0
	for got < len(b) {
		m, err := readAt(b[got:], int64(off)+int64(got))
		got += m
		if err != nil || m == 0 {
			break
		}
	}
	return b, got == len(b)
}
