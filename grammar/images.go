package grammar

import "strings"

// Images, archives and streams written to a file or device named by an
// option or an operand: encryption and compression tools, disk imagers and
// cloners (the dd family, ddrescue, partclone, qemu-img, bmaptool), ISO and
// squashfs builders, media encoders and the old archivers. What they write
// has Write, so a disk device there is overwritten wherever it is named.
func images() []*Spec {
	return []*Spec{
		// openssl's options are whole words: -out and -keyout are written.
		{Name: "openssl", Long: Exact, Operands: []OperandRule{{All: true, Effects: Read}}, Options: join(
			argsV("-out -keyout -writerand -sigout -certout", Write),
			argsV("-in -inkey -key -signature -CAfile -CA -CAkey -certfile -config -kfile -rand", Read),
			args("-pass -passin -passout -subj -days -newkey -cipher -md -digest -name -engine -set_serial -extensions -reqexts -addext -pkeyopt -algorithm -iter -macopt -sigopt -nameopt -certopt -inform -outform -keyform -CAform -aes-256-cbc"),
			flags("-help -noout -text -nodes -noenc -x509 -new -batch -verify -pubout -pubin -hex -base64 -a -A -d -e -salt -nosalt -pbkdf2 -binary -r -c -k -p -P -v -quiet"))},
		// gpg (gnupg's argparse accepts unique prefixes of long options).
		{Name: "gpg", Aliases: []string{"gpg2"}, Operands: []OperandRule{{All: true, Effects: Read}}, Options: join(
			ops(arg("--output -o", Write), arg("--logger-file --log-file", Write), arg("--homedir", Config), arg("--options", Config),
				arg("--passphrase-file", Read), arg("--keyring", Read), arg("--exec-path", Exec), arg("--photo-viewer", Exec)),
			args("--recipient -r --local-user -u --default-key --passphrase --passphrase-fd --pinentry-mode --trust-model --keyserver "+
				"--cipher-algo --digest-algo --compress-algo -z --status-fd --logger-fd --command-fd --default-recipient --hidden-recipient -R --set-filename --comment"),
			flags("--batch --yes --no --encrypt -e --decrypt -d --sign -s --clearsign --clear-sign --detach-sign -b --symmetric -c --armor -a "+
				"--verify --list-keys -k --list-secret-keys -K --import --export --fingerprint --quiet -q --verbose -v --help -h --version --no-tty --with-colons"))},
		// zstd, xz and their siblings: -o names the output (zstd); -c
		// writes to the standard output.
		{Name: "zstd", Aliases: []string{"unzstd", "zstdmt", "pzstd"}, Operands: []OperandRule{{All: true, Effects: Read}}, Options: gnu(
			ops(arg("-o", Write), arg("--output-dir-flat", Write), arg("--output-dir-mirror", Write), arg("-D", Read), arg("--patch-from", Read),
				arg("--filelist", Read), opt("--threads -T", 0), opt("--memory -M", 0), opt("--long", 0)),
			flags("-d --decompress --uncompress -z --compress -f --force -k --keep --rm -c --stdout -q --quiet -v --verbose -t --test -l --list -r -B --ultra --fast --no-progress --sparse --no-sparse --exclude-compressed"))},
		// The stream compressors read their operands (gzip refuses a
		// device unless -c sends the result to the standard output).
		{Name: "gzip", Aliases: []string{"gunzip", "pigz", "bzip2", "bunzip2", "pbzip2", "lbzip2", "xz", "unxz", "lzma", "lzop", "brotli", "zopfli"},
			Operands: []OperandRule{{All: true, Effects: Read}}, Options: gnu(
				ops(opt("--threads -T", 0), arg("--suffix -S", 0), arg("--processes -p", 0), arg("--blocksize -b", 0), arg("--memlimit -M", 0), arg("--format -F", 0), arg("--check -C", 0)),
				flags("-c --stdout --to-stdout -d --decompress --uncompress -z --compress -f --force -k --keep -q --quiet -v --verbose -t --test -l --list -r --recursive -n --no-name -N --name "+
					"-1 -2 -3 -4 -5 -6 -7 -8 -9 --fast --best -e --extreme -s --small -0 --rsyncable"))},
		// lz4 INPUT OUTPUT: the second operand is written (-m reads every
		// operand as an input).
		{Name: "lz4", Aliases: []string{"lz4c", "unlz4", "lz4cat"}, Operands: []OperandRule{{All: true, Effects: Read}}, Refine: func(inv *Invocation) {
			if len(inv.Operands) == 2 && !inv.Has("--multiple") && !inv.Has("--stdout") {
				inv.Operands[1].Effects = Write
			}
		}, Options: gnu(ops(flag("--multiple -m", 0), flag("--stdout -c", 0), arg("-B", 0), arg("--dict -D", Read)),
			flags("-d --decompress --uncompress -z --compress -f --force -k --keep --rm -q --quiet -v --verbose -t --test -l --list -r -1 -2 -3 -4 -5 -6 -7 -8 -9 -12 --fast --best --content-size --no-frame-crc --sparse --no-sparse"))},
		// pv ≥ 1.8: -o/--output FILE writes the data to FILE.
		{Name: "pv", Operands: []OperandRule{{All: true, Effects: Read}}, Options: gnu(
			ops(arg("--output -o", Write), arg("--pidfile -P", Write), arg("--store-and-forward -U", Write), arg("--watchfd -d", 0), arg("--remote -R", 0)),
			args("--rate-limit -L --size -s --name -N --interval -i --width -w --height -H --buffer-size -B --format -F --last-written -A --delay-start -D --error-skip-block"),
			flags("--progress -p --timer -t --eta -e --fineta -I --rate -r --average-rate -a --bytes -b --bits -8 --numeric -n --quiet -q --wait -W --line-mode -l --null -0 "+
				"--force -f --cursor -c --skip-errors -E --stop-at-size -S --sync -Y --direct-io -K --discard -X --no-splice -C --gauge -g --si -k --wait -W"))},
		// ISO builders: -o names the image written.
		{Name: "genisoimage", Aliases: []string{"mkisofs", "xorrisofs"}, Long: Exact, Operands: []OperandRule{{All: true, Effects: Read}}, Options: join(
			ops(arg("-o -output", Write), arg("-path-list", Read), arg("-exclude-list", Read), arg("-sort", Read)),
			args("-V -volid -A -appid -p -preparer -P -publisher -b -eltorito-boot -c -eltorito-catalog -x -m -exclude -graft-points -input-charset -output-charset -boot-load-size -e -G -C -M -sysid -volset"),
			flags("-J -joliet -R -rock -r -rational-rock -l -iso-level -U -f -follow-links -no-emul-boot -boot-info-table -quiet -v -verbose -T -cache-inodes -D -L -N -allow-lowercase -udf -hfs"))},
		{Name: "xorriso", Long: Exact, Options: join(argsV("-outdev -dev", Write), argsV("-indev -add", Read), args("-map -volid -joliet -rockridge -boot_image -padding -report_about -return_with"),
			flags("-as -commit -end -eject -blank -format -toc -abort_on -no_rc"))},
		// qemu-img convert writes its last operand, create its first; dd
		// has dd's of=.
		{Name: "qemu-img", Subs: []*Spec{
			{Name: "convert", Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write | Target}, {All: true, Effects: Read}},
				Options: join(args("-f -F -O -B -o -l -S -t -T -r -m --object"), flags("-c -p -q -n -W -U -C --image-opts --target-image-opts --salvage --force-share"))},
			{Name: "create", Aliases: []string{"amend", "resize", "commit", "rebase", "snapshot", "bitmap"}, Operands: []OperandRule{{Index: 0, Effects: Write | Target}},
				Options: join(args("-f -F -b -B -o -l -a -c -d -s -t -T -b --object"), flags("-q -u -p -U --shrink --preallocation --image-opts --force-share"))},
			{Name: "dd", Operands: []OperandRule{{Prefix: "of=", Effects: Write | Target}, {Prefix: "if=", Effects: Read}}, Options: join(args("-f -O --object"), flags("-U --image-opts --force-share"))},
			sub("info check compare map measure bench", 0),
		}, Options: gnuHelp()},
		// ffmpeg: every word that is not an option or an option's value is
		// an output file (inputs are -i's values).
		{Name: "ffmpeg", Long: Exact, Operands: []OperandRule{{All: true, Effects: Write | Target}}, Options: join(
			ops(arg("-i", Read), arg("-progress", Write), arg("-passlogfile", Write), arg("-filter_script -filter_complex_script", Read)),
			args("-f -c -codec -vcodec -acodec -scodec -c:v -c:a -c:s -b -b:v -b:a -r -s -t -ss -sseof -to -map -map_metadata -vf -af -filter:v -filter:a -filter_complex -lavfi "+
				"-preset -crf -pix_fmt -ar -ac -metadata -threads -loglevel -v -frames:v -vframes -aframes -q:v -q:a -qscale -aspect -movflags -tune -profile:v -g -bf -strict "+
				"-fs -level -x264-params -x265-params -bsf:v -bsf:a -disposition -tag:v -stream_loop -itsoffset -framerate -video_size -probesize -analyzeduration -hwaccel -seek_timestamp -timestamp -max_muxing_queue_size"),
			flags("-y -n -an -vn -sn -dn -hide_banner -nostdin -stats -nostats -re -shortest -copyts -benchmark -h -version -formats -codecs -encoders -decoders"))},
		// GNU ddrescue INFILE OUTFILE [MAPFILE]: --force allows a device as
		// OUTFILE.
		{Name: "ddrescue", Aliases: []string{"gddrescue"}, Operands: []OperandRule{{Index: 0, Effects: Read}, {All: true, From: 1, Effects: Write | Target}}, Options: gnu(
			args("--input-position -i --output-position -o --size -s --cluster-size -c --sector-size -b --max-errors -e --retry-passes -r --min-read-rate -a --max-read-rate --skip-size -K --log-events --log-rates --log-reads --domain-mapfile -m --mapfile-interval"),
			flags("--force -f --no-scrape -n --no-trim -N --direct -d --idirect --odirect --reverse -R --sparse -S --verbose -v --quiet -q --fill-mode -F --generate-mode -G --ask -A --no-split --preallocate -p --synchronous -D --truncate -t --try-again -T"))},
		// The dd clones read dd's key=value operands and their own output
		// keys (dc3dd wipe= overwrites the device with zeros).
		{Name: "dcfldd", Aliases: []string{"dc3dd", "sdd"}, Options: gnuHelp(), Refine: refineDD},
		// bmaptool copy IMAGE DEST writes the image onto DEST.
		{Name: "bmaptool", Subs: []*Spec{{Name: "copy", Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write | Target}, {All: true, Effects: Read}},
			Options: gnu(args("--bmap --bmap-sig --fingerprint --keyring"), flags("--nobmap --no-sig-verify --no-verify --psplash-pipe --removable-device"))},
			sub("create", 0, arg("--output -o", Write))}, Options: gnu(flags("--quiet -q --debug -d"))},
		// mksquashfs SOURCE… DEST: the destination may be a block device.
		{Name: "mksquashfs", Long: Exact, Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write | Target}, {All: true, Effects: Read}}, Options: join(
			argsV("-ef -sort -pf -cpiostyle", Read), args("-comp -b -e -wildcards -regex -processors -mem -root-mode -root-uid -root-gid -force-uid -force-gid -Xcompression-level -Xbcj -Xdict-size -mkfs-time -all-time"),
			flags("-noappend -no-progress -quiet -info -no-xattrs -xattrs -all-root -no-recovery -no-exports -no-sparse -no-fragments -always-use-fragments -no-duplicates -keep-as-directory -offset -tar -no-strip -tarstyle -one-file-system -version -help"))},
		// e2image SOURCE DEST, xfs_copy SOURCE DEST…: the destinations are
		// written (e2image -ra restores an image onto a device).
		{Name: "e2image", Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write | Target}, {All: true, Effects: Read}},
			Options: join(args("-o -O -b -B"), flags("-r -Q -a -f -I -n -p -c"))},
		{Name: "xfs_copy", Operands: []OperandRule{{Index: 0, Effects: Read}, {All: true, From: 1, Effects: Write | Target}},
			Options: join(args("-b -L"), flags("-d -N"))},
		// partclone.FS and ntfsclone write the -o (or -O, overwrite) file:
		// the restored device.
		{Name: "partclone", Aliases: []string{"ntfsclone"}, Operands: []OperandRule{{All: true, Effects: Read}}, Options: gnu(
			ops(arg("--output -o", Write|Target), arg("--overwrite -O", Write|Target), arg("--source -s", Read), arg("--logfile -L", Write)),
			args("--buffer_size -z --checksum-mode -a --blocks-per-checksum -k --dialog -d"),
			flags("--clone -c --restore -r --dev-to-dev -b --domain -D --restore-image --save-image --force -f --quiet -q --debug -N --ncurses --rescue -R --no-check -C --ignore_fschk -I --ignore_crc -i -F --UI-fresh"))},
		// fsarchiver restfs ARCHIVE id=N,dest=DEVICE: dest= is written.
		{Name: "fsarchiver", Operands: []OperandRule{{All: true, Effects: Read}}, Options: gnu(args("-j -z -Z -c -e -L -s -o"), flags("-v -x -A -a -d -o")),
			Refine: func(inv *Invocation) {
				for i := range inv.Operands {
					if j := strings.Index(inv.Operands[i].Value, "dest="); j >= 0 {
						v := inv.Operands[i].Value[j+len("dest="):]
						if k := strings.IndexByte(v, ','); k >= 0 {
							v = v[:k]
						}
						inv.Operands[i].Value, inv.Operands[i].Effects = v, Write|Target
					}
				}
			}},
		// 7z a ARCHIVE FILE…: -sdel deletes the files once archived.
		{Name: "7z", Aliases: []string{"7za", "7zz", "7zr"}, Long: Exact, Persistent: true, Options: ops(flag("-sdel", Delete|Recursive), flag("-r", 0), flag("-y", 0)),
			Subs: []*Spec{{Name: "a", Aliases: []string{"u"}, Operands: []OperandRule{{Index: 0, Effects: Write}, {All: true, From: 1, Effects: Target}}}, sub("x e l t d rn h i b", 0)}},
		// The old archivers write the -f/-F/-O archive.
		{Name: "cpio", Options: gnu(ops(arg("--file -F", Write|Read), arg("-O", Write), arg("-I", Read), arg("--rsh-command", Exec), arg("--pattern-file -E", Read)),
			args("--format -H --block-size -C --directory -D --owner -R --message -M"),
			flags("--create -o --extract -i --pass-through -p -v --verbose -d --make-directories -m --preserve-modification-time -u --unconditional -t --list -a -B -c -V -0 --null -L -l --link --absolute-filenames --no-absolute-filenames"))},
		{Name: "pax", Long: Exact, Options: join(ops(arg("-f", Write|Read)), args("-b -c -o -p -s -x -T -U -G -B"), flags("-r -w -a -d -i -k -l -n -t -u -v -X -H -L -P -0"))},
		{Name: "dump", Aliases: []string{"xfsdump"}, Operands: []OperandRule{{All: true, Effects: Read}}, Options: join(ops(arg("-f", Write), arg("-A", Write), arg("-Q", Write)),
			args("-b -B -d -D -e -E -h -I -L -s -T -z -j -l"), flags("-0 -1 -2 -3 -4 -5 -6 -7 -8 -9 -a -c -M -n -q -S -u -v -W -w -y"))},
	}
}
