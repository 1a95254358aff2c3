package grammar

import "strings"

// Disk tools: formatting, wiping, partitioning, discarding, secure erase.
// Adding a partition, naming or retyping one destroys nothing; zapping,
// clearing, deleting and overwriting a partition table does.
// Their device operands are Targets and the invocation has Format, so a
// block device among the targets is a destroyed disk; their listing, dry-run
// and help forms have DryRun.
func disks() []*Spec {
	mkfs := []string{"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "mkfs.ext2", "mkfs.ext3",
		"mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.msdos", "mkfs.ntfs", "mkfs.exfat",
		"mkfs.f2fs", "mkfs.minix", "mkfs.bfs", "mkfs.cramfs", "mkfs.jfs", "mkfs.reiserfs", "mkfs.hfsplus",
		"mkfs.udf", "mkfs.nilfs2", "mkfs.erofs", "mkudffs", "mkreiserfs", "mkfs.hfs", "newfs", "newfs_msdos"}
	// The mkfs family shares one option table.
	mkfsOpts := gnu(args("-t --type -L -U -b -C -c -d -E -F -g -G -i -I -J -l -m -M -N -o -O -r -T -e -p -s -n"),
		flags("-f -q -v -V -K -S -D -j"))
	// mke2fs -n and -V, and mkfs.xfs -N, only print what would be done or
	// the version (-n is a label in mkfs.vfat, so only these have it).
	// -z FILE (the undo file) takes a value, so -vzn is -z "n", not -n.
	extOpts := join(mkfsOpts, ops(flag("-n", DryRun), flag("-V", DryRun), arg("-z", Write)))
	xfsOpts := join(mkfsOpts, ops(flag("-N", DryRun), flag("-V", DryRun)))
	var out []*Spec
	for _, n := range mkfs {
		o := mkfsOpts
		switch n {
		case "mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4":
			o = extOpts
		case "mkfs.xfs":
			o = xfsOpts
		}
		out = append(out, &Spec{Name: n, Effects: Format, Operands: allTargets, Options: o})
	}
	// mkfs -t TYPE: -t takes a value in every mkfs.
	return append(out,
		&Spec{Name: "wipefs", Operands: allTargets, Options: gnu(
			ops(flag("--all -a", Format), argE("--offset -o", 0, Format), flag("--no-act -n", DryRun),
				arg("--types -t", 0), arg("--output -O", 0), opt("--backup -b", 0)),
			flags("--force -f --noheadings -i --json -J --lock --parsable -p --quiet -q"))},
		&Spec{Name: "blkdiscard", Effects: Format, Operands: allTargets, Options: gnu(
			args("--offset -o --length -l --step -p"), flags("--force -f --secure -s --zeroout -z --quiet -q --verbose -v"))},
		// sgdisk runs every operation it is given, in order: a listing
		// option beside a destroying one lowers nothing (only --pretend
		// keeps it from writing). Adding, naming or retyping a partition
		// destroys nothing (see above).
		&Spec{Name: "sgdisk", Operands: allTargets, Options: gnu(
			ops(flag("--zap-all -Z", Format), flag("--zap -z", Format), flag("--clear -o", Format),
				argE("--delete -d", 0, Format), arg("--new -n", 0), arg("--largest-new -N", 0),
				flag("--mbrtogpt -g", Format), argE("--load-backup -l", Read, Format), argE("--replicate -R", Target, Format),
				flag("--randomize-guids -G", 0), argE("--gpttombr -m", 0, Format), arg("--hybrid -h", 0),
				arg("--change-name -c", 0), arg("--typecode -t", 0), arg("--transpose -r", 0),
				arg("--disk-guid -U", 0), arg("--partition-guid -u", 0), arg("--attributes -A", 0),
				argE("--backup -b", Write, 0), flag("--print -p", 0), flag("--pretend -P", DryRun),
				flag("--verify -v", 0), arg("--info -i", 0), flag("--list-types -L", 0),
				flag("--sort -s", 0), arg("--move-second-header -e", 0), arg("--move-main-table -j", 0)),
			args("--align-end --set-alignment -a --first-in-largest -f --end-of-largest -E"),
			flags("--print-mbr -O --version -V -D --first-aligned-in-largest -F"))},
		// gdisk, fdisk, cfdisk and cgdisk read commands from their input:
		// given a device and no listing option they may rewrite it.
		&Spec{Name: "fdisk", Aliases: []string{"gdisk", "cfdisk", "cgdisk", "fixparts"}, Effects: Format, Operands: allTargets,
			Options: gnu(ops(flag("--list -l", DryRun), flag("--list-details -x", DryRun)),
				args("--sector-size -b --compatibility -c --color -L --output -o --type -t --units -u --wipe -w --wipe-partitions -W --lock -C -H -S"),
				flags("--getsz -s --noauto-pt -n --protect-boot -B"))},
		&Spec{Name: "sfdisk", Effects: Format, Operands: allTargets, Options: gnu(
			ops(flag("--list -l", DryRun), flag("--list-free -F", DryRun), flag("--dump -d", DryRun), flag("--json -J", DryRun),
				flag("--show-size -s", DryRun), flag("--show-geometry -g", DryRun), flag("--verify -V", DryRun),
				flag("--no-act -n", DryRun), flag("--backup-pt-sectors", DryRun), flag("--list-types -T", DryRun),
				flag("--part-type", 0), flag("--part-label", 0), flag("--part-uuid", 0), flag("--part-attrs", 0),
				flag("--disk-id", 0), flag("--activate -A", 0), flag("--delete", 0), flag("--relocate", 0), flag("--reorder -r", 0)),
			args("--backup-file -O --sector-size --color --label -X --label-nested -Y --lock --move-data --output -o --wipe -w --wipe-partitions -W"),
			flags("--append -a --backup -b --force -f --move-use-fsync --no-reread --no-tell-kernel --quiet -q --unit -u"))},
		&Spec{Name: "parted", Aliases: []string{"partprobe"}, Operands: allTargets, Refine: refineParted, Options: gnu(
			ops(flag("--list -l", DryRun), flag("--script -s", 0), flag("--machine -m", 0), flag("--fix -f", 0),
				arg("--align -a", 0), flag("--json -j", 0)))},
		&Spec{Name: "nvme", Options: gnuHelp(), Subs: []*Spec{
			{Name: "format", Effects: Format | Device, Operands: allTargets, Options: args("--namespace-id -n --lbaf -l --ses -s --pi -i --pil -p --ms -m --timeout -t")},
			{Name: "sanitize", Effects: Format | Device, Operands: allTargets, Options: args("--sanact -a --ovrpat -p --owpass -n")},
			{Name: "write-zeroes", Aliases: []string{"write-uncor", "dsm", "write", "ns-delete", "delete-ns", "detach-ns", "fw-download", "fw-commit", "security-send",
				"admin-passthru", "io-passthru"}, Effects: Format | Device, Operands: allTargets},
			{Name: "zns", Subs: []*Spec{{Name: "reset-zone", Aliases: []string{"finish-zone", "offline-zone", "zone-append", "zrwa-flush-zone"}, Effects: Format | Device, Operands: allTargets}}},
		}},
		&Spec{Name: "cryptsetup", Persistent: true, Options: gnu(
			args("--type -M --cipher -c --hash -h --key-file -d --key-size -s --key-slot -S --iter-time -i --pbkdf "+
				"--header --offset -o --skip -p --size -b --sector-size --label --subsystem --uuid --master-key-file --volume-key-file"),
			flags("--batch-mode -q --verbose -v --debug --readonly -r --allow-discards --use-random --use-urandom --force-password")),
			Subs: []*Spec{
				{Name: "luksFormat", Aliases: []string{"erase", "luksErase", "luksKillSlot", "reencrypt", "tcryptFormat"}, Effects: Format, Operands: []OperandRule{{Index: 0, Effects: Target}}},
				// Restoring a header backup, removing a key and repairing
				// can each make the volume key unrecoverable.
				{Name: "luksHeaderRestore", Aliases: []string{"luksRemoveKey", "repair", "luksChangeKey", "luksConvertKey", "convert"}, Effects: DiskChange, Operands: []OperandRule{{Index: 0, Effects: Target}}},
				{Name: "open", Aliases: []string{"luksOpen", "close", "luksClose", "status", "luksDump", "isLuks", "luksUUID", "benchmark", "resize"}},
			}},
		&Spec{Name: "hdparm", Long: Exact, Operands: allTargets, Options: join(
			ops(argE("--security-erase", 0, Format), argE("--security-erase-enhanced", 0, Format),
				argE("--security-set-pass", 0, Format), argE("--trim-sector-ranges", 0, Format),
				flag("--trim-sector-ranges-stdin", Format), argE("--write-sector", 0, Format),
				argE("--make-bad-sector", 0, Format), argE("--fwdownload", Read, Format),
				argE("--fwdownload-mode3", Read, Format), argE("--fwdownload-mode7", Read, Format),
				argE("--dco-restore", 0, Format), flag("--dco-setmax", Format), argE("--user-master", 0, 0),
				argE("--security-unlock", 0, 0), argE("--security-disable", 0, 0)),
			flags("-a -A -b -B -c -C -d -D -E -f -F -g -h -H -i -I -J -k -K -L -m -M -n -N -p -P -q -Q -r -R -s -S -t -T -u -v -V -w -W -x -X -y -Y -z -Z"))},
		&Spec{Name: "mdadm", Operands: allTargets, Options: gnu(
			ops(flag("--zero-superblock", Format), flag("--create -C", Format), flag("--build -B", Format),
				flag("--examine -E", DryRun), flag("--detail -D", DryRun), flag("--query -Q", DryRun)),
			args("--level -l --raid-devices -n --chunk -c --metadata -e --name -N --homehost --config --spare-devices -x --layout -p --bitmap -b"))},
		&Spec{Name: "badblocks", Operands: []OperandRule{{Index: 0, Effects: Target}}, Options: join(
			// -n is "non-destructive": it still rewrites every block
			// (restoring its data after), a write to the whole disk. -o
			// writes the list of bad blocks; -h names a host device.
			ops(flag("-w", Format), flag("-n", Format), argE("-o", Write, 0)), args("-b -c -d -e -i -p -t -h"), flags("-f -s -v -B -X"))},
		&Spec{Name: "lvremove", Aliases: []string{"vgremove", "pvremove", "lvreduce"}, Effects: Format | Device, Operands: allTargets,
			Options: gnu(flags("--force -f --yes -y --verbose -v"), ops(flag("--test -t", DryRun)))},
		// ZFS pool members are overwritten by create, add, attach and
		// replace; they are named as disks ("sda") as often as as paths.
		&Spec{Name: "zpool", Subs: []*Spec{{Name: "destroy", Aliases: []string{"labelclear", "create", "add", "attach", "replace", "split", "initialize", "trim"},
			Effects: Format | Device, Operands: allTargets, Options: join(args("-o -O -m -R -t"), flags("-f -n -d -s -w -c -u -P -g -L"))}}},
		&Spec{Name: "zfs", Subs: []*Spec{{Name: "destroy", Effects: Format | Device, Operands: allTargets}}},
		&Spec{Name: "diskutil", Refine: refineDiskutil},
	)
}

// partedWriters are parted commands that change the partition table.
var partedWriters = map[string]bool{
	"mklabel": true, "mktable": true, "rm": true, "mkpart": true, "mkpartfs": true, "resizepart": true,
	"resize": true, "mkfs": true, "rescue": true, "move": true, "cp": true, "disk_set": true, "set": true,
	"name": true, "type": true, "toggle": true,
}

// partedReaders are parted commands that change nothing, with how many
// words of arguments each takes (unit UNIT, align-check TYPE N).
var partedReaders = map[string]int{"print": 0, "unit": 1, "help": 0, "version": 0, "quit": 0, "align-check": 2}

// refineParted: parted DEVICE COMMAND… changes the disk unless every command
// only reads; with a device and no command it reads commands from its
// input. parted takes any unique prefix of a command name ("mkl" is
// mklabel), so a word is a reader only when it abbreviates a reader and no
// writer; anything else (a writer, an ambiguous or unknown word) counts as
// a change, which fails closed.
func refineParted(inv *Invocation) {
	if inv.Effects.Has(DryRun) || len(inv.Operands) == 0 {
		return
	}
	if len(inv.Operands) == 1 {
		inv.Effects |= Format
		return
	}
	ops := inv.Operands[1:]
	for i := 0; i < len(ops); i++ {
		n, ok := partedReader(strings.ToLower(ops[i].Value))
		if !ok {
			inv.Effects |= Format
			return
		}
		i += n
	}
	for i := range ops {
		ops[i].Effects &^= Target
	}
}

// partedReader reports whether parted reads w as a command that changes
// nothing, and how many argument words that command takes.
func partedReader(w string) (int, bool) {
	if w == "" {
		return 0, false
	}
	for name := range partedWriters {
		if strings.HasPrefix(name, w) {
			return 0, false
		}
	}
	found, args := "", 0
	for name, n := range partedReaders {
		if strings.HasPrefix(name, w) {
			if found != "" {
				return 0, false // ambiguous
			}
			found, args = name, n
		}
	}
	return args, found != ""
}

// diskutilErase are diskutil verbs that erase or repartition (any case).
var diskutilErase = map[string]bool{
	"erasedisk": true, "erasevolume": true, "zerodisk": true, "randomdisk": true, "secureerase": true,
	"partitiondisk": true, "reformat": true, "deletecontainer": true, "deletevolume": true, "splitpartition": true,
	"mergepartitions": true, "erase": true,
}

func refineDiskutil(inv *Invocation) {
	for _, op := range inv.Operands {
		if diskutilErase[strings.ToLower(op.Value)] {
			inv.Effects |= Format | Device
			for i := range inv.Operands {
				inv.Operands[i].Effects |= Target
			}
			return
		}
	}
}
