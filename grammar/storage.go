package grammar

import "strings"

// Storage stacks beyond the partitioning and mkfs tools of disks.go: disk
// wipers, LVM, ZFS, btrfs, dm-integrity/verity, zoned devices, SCSI, NVMe
// passthrough, self-encrypting drives, MTD flash and firmware flash, and
// the repair tools that rewrite a filesystem's metadata.
//
// As in disks.go, a tool that destroys what is on its device operands has
// Format and Target operands (a block device among them is a destroyed
// disk); Device is added where the targets are disks whatever they are
// called (a pool member named "sda", every disk of the machine). Repairs
// and metadata changes that can lose data but are routine have DiskChange.
func storage() []*Spec {
	fmtAll := func(names string, o ...[]Option) *Spec {
		f := strings.Fields(names)
		return &Spec{Name: f[0], Aliases: f[1:], Effects: Format, Operands: allTargets, Options: gnu(o...)}
	}
	// --test: "commands will not update metadata".
	lvmOpts := gnu(flags("--force -f --yes -y --verbose -v --quiet -q --debug -d --noudevsync"), ops(flag("--test -t", DryRun)),
		args("--config --commandprofile --metadatatype -M --reportformat --devices --devicesfile"))
	return []*Spec{
		// nwipe --autonuke wipes every disk it finds when none is named:
		// no operand says which.
		{Name: "nwipe", Effects: Format, Operands: allTargets, Options: gnu(
			ops(flag("--autonuke", Format|Device)),
			args("--method -m --prng --rounds -r --logfile -l --exclude -e --verify --PDFreportpath -P"),
			flags("--nogui --nowait --nosignals --nousb --noblank --quiet -q --verbose -v --sync"))},
		// scrub and wipe overwrite files and devices in place (as shred does).
		{Name: "scrub", Effects: DeviceWrite | Delete, Operands: allTargets, Options: gnu(
			args("--pattern -p --blocksize -b --device-size -s --dirent -D --freespace -X"),
			flags("--force -f --no-signature -S --remove -r --no-hwrand -n --no-threads -t"))},
		{Name: "wipe", Effects: DeviceWrite | Delete, Operands: allTargets, Options: join(
			ops(flag("-r -R", Recursive), flag("-f", Force)), args("-Q -l -x -p -b -S -M"),
			flags("-i -s -v -V -k -c -D -e -z -Z -q -a -h -F -o -T -C"))},
		// secure-delete's srm overwrites and unlinks (-r: whole trees).
		{Name: "srm", Effects: DeviceWrite | Delete, Operands: allTargets, Options: join(
			ops(flag("-r -R", Recursive), flag("-f", Force)), flags("-d -l -l -s -m -z -v -x -i -V"))},
		// fsfreeze -f stops every write to the filesystem until -u.
		{Name: "fsfreeze", Operands: allTargets, Options: gnu(ops(flag("--freeze -f", Mount), flag("--unfreeze -u", 0)))},
		// mtools: mformat -i IMAGE formats the image or device given to -i.
		{Name: "mformat", Effects: Format, Operands: allTargets, Options: join(
			ops(argE("-i", Target, 0)), args("-t -h -s -T -l -c -d -r -L -N -H -M -a -m -S -B -k -C -I -f -X -F -v -1 -2 -0 -A -R"))},
		{Name: "integritysetup", Aliases: []string{"veritysetup"}, Persistent: true, Options: gnu(
			args("--integrity -I --tag-size -t --sector-size -s --journal-size -j --data-device --hash --salt --hash-offset --data-block-size --hash-block-size --format --uuid --root-hash-file --fec-device --fec-roots --key-file --key-size"),
			flags("--batch-mode -q --verbose -v --debug --no-wipe --no-superblock")),
			Subs:     []*Spec{sub("format", Format), sub("open create close remove status dump verify", 0)},
			Operands: allTargets},
		// btrfs: device add and replace start overwrite the new member;
		// check --repair and rescue rewrite metadata. btrfs accepts unique
		// prefixes of its command words ("btrfs dev add").
		{Name: "btrfs", Refine: refineBtrfs, Options: gnu(flags("--force -f --repair --init-csum-tree --init-extent-tree --enqueue -K --nodiscard -q --quiet -v --verbose -B -r"),
			args("--format --log -s --subvol-extents --tree-root --chunk-root --backup --mode"))},
		// lvm runs its first operand as the LVM command ("lvm lvremove").
		{Name: "lvm", StopAtOperand: true, Wrap: &Wrap{}, Options: gnuHelp()},
		// pvcreate writes a PV label at the start of each device; vgcreate
		// and vgextend do so implicitly for their PV operands.
		fmtAll("pvcreate", lvmOpts, args("--dataalignment --metadatasize --uuid -u --restorefile --setphysicalvolumesize --labelsector --pvmetadatacopies"),
			flags("--zero -Z --norestorefile")),
		{Name: "vgcreate", Aliases: []string{"vgextend"}, Effects: Format, Operands: []OperandRule{{All: true, From: 1, Effects: Target}},
			Options: join(lvmOpts, args("--physicalextentsize -s --maxlogicalvolumes -l --maxphysicalvolumes -p --alloc --addtag --metadatasize"))},
		// lvresize shrinks as readily as it grows; only a "+SIZE" surely
		// grows.
		{Name: "lvresize", Operands: allTargets, Refine: refineLvresize,
			Options: join(lvmOpts, ops(arg("--size -L", 0), arg("--extents -l", 0)), args("--stripes -i --stripesize -I --poolmetadatasize --alloc"), flags("--nofsck -n --resizefs -r"))},
		{Name: "blkzone", Operands: allTargets, Subs: []*Spec{sub("reset finish", Format), sub("report capacity open close", 0)},
			Persistent: true, Options: gnu(args("--offset -o --length -l --count -c"), flags("--force -f --verbose -v"))},
		// sg3_utils: FORMAT UNIT, SANITIZE, UNMAP and WRITE SAME destroy the
		// medium; sg_format without --format only prints.
		{Name: "sg_format", Operands: allTargets, Options: gnu(
			ops(flag("--format -F", Format)), args("--count -c --fmtpinfo -f --pfu -P --pie -q --size -s --timeout -m --ffmt -t --dry-run"),
			flags("--early -e --fmtmaxlba -b --long -l --quick -Q --resize -r --verbose -v --wait -w --ip-def -I --six -6 --verify -y"))},
		{Name: "sg_sanitize", Aliases: []string{"sg_unmap", "sg_write_same", "sg_write_long", "sg_write_verify", "sg_write_x", "sg_compare_and_write", "sg_stream_ctl"},
			Effects: Format, Operands: allTargets, Options: gnu(args("--lba -l --num -n --pattern -p --zero -z --ipl --timeout -t --in -i --count -c"))},
		// sedutil-cli reverts (PSID, TPer, locking SP) crypto-erase the drive.
		{Name: "sedutil-cli", Operands: allTargets, Refine: refineSedutil},
		fmtAll("flash_erase", flags("-j --jffs2 -N --noskipbad -q --quiet -u --unlock")),
		fmtAll("flash_eraseall"),
		{Name: "flashcp", Effects: Format, Operands: []OperandRule{{Index: -1, Effects: Target}}, Options: gnu(flags("-v --verbose -p --partition -A --erase-all"))},
		{Name: "nandwrite", Effects: Format, Operands: []OperandRule{{Index: 0, Effects: Target}}, Options: gnu(args("-s --start -p --pad -b --blockalign"), flags("-a -m -n -N -o -q -k -r"))},
		{Name: "mtd_debug", Operands: allTargets, Refine: func(inv *Invocation) {
			if len(inv.Operands) > 0 && (inv.Operands[0].Value == "erase" || inv.Operands[0].Value == "write") {
				inv.Effects |= Format | Device
			}
		}},
		// flashrom rewrites (or erases) the machine's firmware flash.
		{Name: "flashrom", Options: gnu(ops(optE("--write -w", Read, DiskChange), flag("--erase -E", DiskChange), opt("--read -r", Write),
			arg("--programmer -p", 0), arg("--chip -c", 0), arg("--layout -l", Read), arg("--image -i", 0), opt("--verify -v", Read)),
			flags("--force -f --noverify -n --list-supported -L --flash-name --flash-size --verbose -V"))},
		// debugfs -w opens the filesystem read-write for its requests.
		{Name: "debugfs", Operands: allTargets, Options: join(ops(flag("-w", DiskChange), argE("-R", Code, 0), argE("-f", Read, 0)),
			args("-b -s -d -z"), flags("-c -i -n -D -V"))},
		{Name: "xfs_repair", Operands: allTargets, Options: join(ops(flag("-L", DiskChange), flag("-n", DryRun)), args("-o -l -r -m -c"), flags("-d -e -f -P -t -v -V"))},
		{Name: "dmsetup", Persistent: true, Options: gnu(args("--table --uuid -u --major -j --minor -m --readahead --udevcookie --nameprefixes --manglename -o --columns"),
			flags("--force -f --retry --deferred --noflush --nolockfs --noudevsync --verbose -v --readonly -r --noheadings -c --ignorelockingfailure --nameprefixes")),
			Subs: []*Spec{sub("remove_all remove wipe_table clear suspend reload load", DiskChange), sub("ls info table status deps targets version create mknodes", 0)}},
		// fsck repairs unless told not to change anything (-n; fsck -N
		// only prints what it would run).
		{Name: "fsck", Aliases: []string{"e2fsck"}, Effects: DiskChange, Operands: allTargets,
			Options: join(ops(flag("-n", DryRun), flag("-N", DryRun)), args("-b -B -l -L -C -E -j -t -z"), flags("-p -a -y -f -c -k -v -D -F -A -R -M -P -s -V -r -T"))},
		{Name: "tune2fs", Operands: allTargets, Options: join(ops(flag("-l", DryRun)), args("-c -C -e -E -f -g -i -I -j -J -L -m -M -o -O -r -Q -T -u -U -z")),
			Refine: func(inv *Invocation) {
				if !inv.Has("-l") {
					inv.Effects |= DiskChange
				}
			}},
		// Labels, partition growth and boot loaders rewrite a little of the
		// disk, routinely (cloud images grow their root partition at boot).
		{Name: "e2label", Aliases: []string{"fatlabel", "exfatlabel", "ntfslabel", "swaplabel", "xfs_admin", "btrfs-label"}, Operands: []OperandRule{{Index: 0, Effects: Target}},
			Options: gnu(args("-L -U --label --uuid"), flags("-l -u -j -c -p -r -f")), Refine: func(inv *Invocation) {
				// One operand only prints the label (e2label DEV, fatlabel DEV).
				if len(inv.Operands) > 1 || len(inv.Options) > 0 && !inv.Has("-l") && !inv.Has("-u") {
					inv.Effects |= DiskChange
				}
			}},
		{Name: "growpart", Effects: DiskChange, Operands: []OperandRule{{Index: 0, Effects: Target}}, Options: ops(flag("--dry-run -N", DryRun), flag("--verbose -v", 0),
			arg("--update -u", 0), arg("--free-percent", 0), arg("--fudge", 0), flag("--help -h", DryRun))},
		{Name: "grub-install", Aliases: []string{"grub2-install", "grub-bios-setup", "grub2-bios-setup"}, Effects: DiskChange, Operands: allTargets,
			Options: gnu(args("--target --boot-directory --efi-directory --bootloader-id --directory -d --modules --install-modules --themes --fonts --locales --compress --core-compress --disk-module --label-font"),
				flags("--force --recheck --removable --no-nvram --no-floppy --skip-fs-probe --no-bootsector --no-uefi-secure-boot --uefi-secure-boot -v --verbose"))},
		// udisksctl: power-off spins a disk down and detaches it; the
		// queries read; mount and unlock are routine.
		{Name: "udisksctl", Subs: []*Spec{
			sub("power-off", DiskChange, args("--block-device -b --object-path -p")...),
			sub("mount unmount lock unlock loop-setup loop-delete", Mount, join(args("--block-device -b --object-path -p --filesystem-type -t --options -o --file -f --key-file"), flags("--no-user-interaction --force -f --read-only -r"))...),
			sub("info status dump monitor smart-simulate help", 0, args("--block-device -b --object-path -p --drive -d")...),
		}},
		{Name: "resize2fs", Effects: DiskChange, Operands: []OperandRule{{Index: 0, Effects: Target}}, Options: join(ops(flag("-P", DryRun)), args("-S -z -b"), flags("-d -f -F -M -p -s"))},
		{Name: "bcachefs", Subs: []*Spec{sub("format", Format), sub("fsck", DiskChange), sub("show-super list fs", 0)}, Operands: allTargets, Persistent: true,
			Options: gnu(args("--label -L --uuid -U --block_size --replicas --compression --encrypted"), flags("--force -f --discard"))},
	}
}

// refineBtrfs reads btrfs's command words by unique prefix, as btrfs does:
// device add and replace start overwrite their device operands; check
// --repair and rescue rewrite metadata.
func refineBtrfs(inv *Invocation) {
	if len(inv.Operands) < 1 {
		return
	}
	w := func(i int, name string) bool {
		return i < len(inv.Operands) && inv.Operands[i].Value != "" && strings.HasPrefix(name, inv.Operands[i].Value)
	}
	switch {
	case w(0, "device") && w(1, "add"), w(0, "replace") && w(1, "start"):
		inv.Effects |= Format
		for i := range inv.Operands[2:] {
			inv.Operands[2+i].Effects |= Target
		}
	case w(0, "rescue"), w(0, "check") && inv.Has("--repair"):
		inv.Effects |= DiskChange
	}
}

// refineLvresize: a size that does not start with "+" may shrink the
// volume (an absolute size below the current one, or "-SIZE"), which cuts
// off the filesystem on it, as lvreduce does.
func refineLvresize(inv *Invocation) {
	for _, o := range inv.Options {
		if (o.Name == "--size" || o.Name == "--extents") && o.HasValue && !strings.HasPrefix(o.Value, "+") {
			inv.Effects |= Format | Device
		}
	}
}

// refineSedutil: sedutil-cli's options are case-insensitive words; every
// revert form (PSID, TPer, locking SP, "yes I really want to erase")
// crypto-erases the drive.
func refineSedutil(inv *Invocation) {
	for _, a := range inv.Args {
		l := strings.ToLower(a)
		if strings.HasPrefix(l, "-") && (strings.Contains(l, "revert") || strings.Contains(l, "erase")) {
			inv.Effects |= Format | Device
		}
	}
}
