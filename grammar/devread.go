package grammar

// Device readers: tools that inspect disks, partitions and filesystems
// without writing them. A disk device given to a program the grammar does
// not know is a possible raw write (package approval holds it hardline), so
// the everyday inspection tools say here that their operands are read.
// Their write-capable options are declared with what they do.
func deviceReaders() []*Spec {
	read := []OperandRule{{All: true, Effects: Read}}
	return []*Spec{
		{Name: "blkid", Operands: read, Options: gnu(args("--cache-file -c --match-tag -s --match-token -t --output -o --usages -u --label -L --uuid -U --offset -O --size -S --hint -H"),
			flags("--garbage-collect -g --list-one -l --list-filesystems -k --no-encoding -d --probe -p --info -i --verbose -V"))},
		{Name: "smartctl", Operands: read, Options: gnu(args("--device -d --tolerance -T --badsum -b --report -r --nocheck -n --smart -s --offlineauto -o --saveauto -S --set --get -g "+
			"--log -l --vendorattribute -v --format -f --presets -P --drivedb -B --json -j --quietmode -q --identify"),
			flags("--all -a --xall -x --info -i --health -H --capabilities -c --attributes -A --scan --scan-open --abort -X --test -t --captive -C"))},
		{Name: "udevadm", Operands: read, Options: gnuHelp(), Subs: []*Spec{
			sub("info", 0, args("--query -q --property --value --path -p --name -n --root -r --attribute-walk -a --export-db -e --cleanup-db -c")...),
			sub("monitor settle control test-builtin verify wait lock", 0),
			// trigger --action=remove synthesises remove events for every
			// device (or those matched): disks and NICs are treated as gone.
			{Name: "trigger", Options: gnu(ops(arg("--action -c", 0), flag("--dry-run -n", DryRun)),
				args("--type -t --subsystem-match -s --subsystem-nomatch -S --attr-match -a --attr-nomatch -A --property-match -p --tag-match -g --sysname-match -y --name-match --parent-match -b --prioritized-subsystem --uuid"),
				flags("--verbose -v --quiet -q --settle -w --wait-daemon --initialized-match --initialized-nomatch")),
				Refine: func(inv *Invocation) {
					if v, _ := inv.Value("--action"); v == "remove" || v == "unbind" {
						inv.Effects |= Kernel
					}
				}},
		}},
		{Name: "findmnt", Aliases: []string{"lsfd"}, Operands: read, Options: gnu(args("--output -o --types -t --options -O --source -S --target -T --tab-file -F --direction -d --poll -p --timeout -w --mountpoint -M --id --uniq-id"),
			flags("--all -A --ascii -a --canonicalize -c --df -D --evaluate -e --first-only -f --invert -i --json -J --list -l --kernel -k --noheadings -n --notruncate -u --pairs -P --raw -r --real --pseudo --shadowed --submounts -R --verify -x --verbose"))},
		{Name: "dumpe2fs", Aliases: []string{"xfs_info", "xfs_metadump", "xfs_logprint", "btrfs-show-super", "ntfsinfo"}, Operands: read,
			Options: join(args("-o -b -l"), flags("-h -x -i -g -f -V -n -t -C -c"))},
		{Name: "blockdev", Operands: read, Options: join(args("--setra --setfra --setbsz"),
			flags("--getsz --getsize --getsize64 --getss --getpbsz --getiomin --getioopt --getalignoff --getmaxsect --getbsz --getra --getfra --getro --getdiscardzeroes --report --setro --setrw --flushbufs --rereadpt -q -v"))},
		{Name: "partx", Aliases: []string{"kpartx", "losetup", "eject", "sg_inq", "sg_readcap", "sg_vpd", "sg_map", "lsscsi", "iostat", "pvs", "vgs", "lvs", "pvdisplay", "vgdisplay", "lvdisplay", "pvscan", "vgscan", "lvscan"},
			Operands: read, Options: gnu(args("--output -o --nr -n --type -t --sizelimit --options -O --columns"),
				flags("--show -s --list -l --all -a --bytes -b --noheadings -g --raw -r --verbose -v --find -f --detach -d --json -J --partscan -P --read-only --add --delete --update -u"))},
	}
}
