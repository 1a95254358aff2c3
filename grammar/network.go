package grammar

import "strings"

// Network tools: ssh and friends (options that name a command: -o
// ProxyCommand=, scp -S, rsync -e), remote commands, downloads written to
// files, listeners that run a command.
func network() []*Spec {
	sshExec := []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand", "match", "securitykeyprovider", "pkcs11provider", "proxyjump"}
	sshOpts := join(ops(arg("-o", Config), arg("-F", Config), arg("-E", Write), arg("-i", Read), arg("-S", 0), flag("-V", DryRun)),
		args("-b -c -D -e -I -J -L -l -m -O -p -Q -R -W -w -B -P"),
		flags("-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -v -X -x -Y -y"))
	scpOpts := join(ops(arg("-S", Exec), arg("-D", Exec), arg("-o", Config), arg("-F", Config), arg("-i", Read)),
		args("-c -J -l -P -X"), flags("-3 -4 -6 -A -B -C -O -p -q -R -r -s -T -v"))
	rsyncOpts := join(join(ops(arg("--rsh -e", Exec), arg("--rsync-path", Exec), arg("--log-file", Write), arg("--write-batch --only-write-batch", Write),
		arg("--remote-option -M", Config), arg("--temp-dir -T", Write),
		flag("--remove-source-files", Delete), flag("--dry-run -n", DryRun), flag("--list-only", DryRun), flag("--help -h", DryRun), flag("--version -V", DryRun)), argsV("--read-batch --early-input --files-from --exclude-from --include-from --password-file", Read),
		argsV("--backup-dir --partial-dir --compare-dest --copy-dest --link-dest", Write), ops(flag("--delete-during --del", Delete|Recursive)),
		flagsE("--delete --delete-before --delete-after --delete-delay --delete-excluded --delete-missing-args", Delete|Recursive)),
		args("--exclude --include --filter -f --chmod --chown --suffix --bwlimit --timeout --contimeout --port --max-size --min-size "+
			"--out-format --log-file-format --info --debug --sockopts --address --protocol --iconv --checksum-choice --cc --compress-choice --zc "+
			"--compress-level --zl --skip-compress --usermap --groupmap --modify-window -@ --block-size -B --outbuf --stop-after --stop-at --max-delete --max-alloc"),
		flags("-a --archive -r --recursive -v --verbose -z --compress -P --progress --partial -u --update -l --links -L --copy-links -H --hard-links "+
			"-p --perms -o --owner -g --group -t --times -D --devices --specials -x --one-file-system -c --checksum -q --quiet -h --human-readable "+
			"-i --itemize-changes --stats -b --backup -R --relative --mkpath -S --sparse -W --whole-file --inplace --append --ignore-existing --existing "+
			"-C --cvs-exclude -F -k -K -m -O -J -U -N -X -A -E -y -0 --from0 -s --secluded-args --protect-args -4 -6 --ipv4 --ipv6 --numeric-ids --super --fake-super --force"))
	curlOut := ops(arg("--output -o", Write), flag("--remote-name -O", Write), flag("--remote-name-all", Write), arg("--output-dir", Write),
		arg("--config -K", Config), arg("--upload-file -T", Read), arg("--cookie-jar -c", Write), arg("--dump-header -D", Write),
		arg("--netrc-file", Read), arg("--data -d", Read), arg("--form -F", Read),
		flag("--version -V", DryRun), flag("--help -h", DryRun), flag("--manual -M", DryRun))
	curlOut = join(curlOut, argsV("--trace --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc", Write),
		argsV("--data-binary --data-raw --data-urlencode --data-ascii --json --form-string", Read))
	curlArgs := args("--header -H --user -u --user-agent -A --referer -e --cookie -b --request -X --max-time -m --connect-timeout --retry " +
		"--retry-delay --retry-max-time --proxy -x --proxy-user -U --range -r --cert -E --key --cacert --capath --time-cond -z --speed-limit -Y " +
		"--speed-time -y --interface --resolve --connect-to --url --quote -Q --ftp-port -P --telnet-option -t --create-file-mode --unix-socket " +
		"--abstract-unix-socket --engine --variable --parallel-max --limit-rate --max-filesize --proto --proto-redir --doh-url --write-out -w " +
		"--max-redirs --expect100-timeout --keepalive-time --local-port --oauth2-bearer --pass --pubkey --request-target --socks5 --socks5-hostname " +
		"--tls-max --ciphers --aws-sigv4 --url-query --happy-eyeballs-timeout-ms --dns-servers --mail-from --mail-rcpt --noproxy --preproxy")
	wgetOpts := join(ops(arg("--output-document -O", Write), arg("--output-file -o", Write), arg("--append-output -a", Write), arg("--directory-prefix -P", Write),
		arg("--input-file -i", Read), arg("--execute -e", Config), arg("--config", Config), arg("--post-file --body-file", Read),
		arg("--use-askpass", Exec), flag("--version -V", DryRun), flag("--help -h", DryRun)),
		args("--user-agent -U --header --user --password --post-data --body-data --method --tries -t --timeout -T --wait -w --level -l --accept -A --reject -R --domains -D --exclude-domains --limit-rate --referer --load-cookies --save-cookies"),
		flags("-q --quiet -v --verbose -nv --no-verbose -c --continue -N --timestamping -r --recursive -m --mirror -k --convert-links -p --page-requisites -np --no-parent -nc --no-clobber -S --server-response --spider -b --background"))
	return []*Spec{
		{Name: "ssh", Aliases: []string{"autossh"}, StopAtOperand: true, Effects: Network, Options: sshOpts, ExecKeys: sshExec,
			Operands: []OperandRule{{Index: 0, Effects: Target}, {All: true, From: 1, Effects: Exec, Invocation: Remote}}},
		{Name: "scp", Effects: Network, Options: scpOpts, ExecKeys: sshExec, Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write}, {All: true, Effects: Read}}},
		{Name: "sftp", Effects: Network, ExecKeys: sshExec, Options: join(ops(arg("-S", Exec), arg("-D", Exec), arg("-b", Code), arg("-o", Config), arg("-F", Config), arg("-i", Read)),
			args("-B -c -J -l -P -R -X"), flags("-4 -6 -A -a -C -f -N -p -q -r -v"))},
		{Name: "rsync", Effects: Network, Options: rsyncOpts, Operands: []OperandRule{{Index: -1, Min: 2, Effects: Write | Target}, {All: true, Effects: Read}},
			Refine: func(inv *Invocation) {
				if !inv.Effects.Has(Delete) {
					return
				}
				if inv.Has("--remove-source-files") {
					// The sources are deleted once sent: every file of
					// a tree with -r or -a.
					for i := range inv.Operands[:max(len(inv.Operands)-1, 0)] {
						inv.Operands[i].Effects |= Target
					}
					if inv.Has("-r") || inv.Has("-a") {
						inv.Effects |= Recursive
					}
				}
				for i := range inv.Operands {
					if inv.Operands[i].Effects.Has(Write) {
						inv.Operands[i].Effects |= Target
					}
				}
			}},
		{Name: "curl", Effects: Network, Options: join(curlOut, curlArgs, flags("-s --silent -S --show-error -f --fail -L --location -k --insecure -I --head -i --include -v --verbose -G --get -N --no-buffer -# --progress-bar -Z --parallel -j --junk-session-cookies -n --netrc -C -l --list-only -a --append -B --use-ascii -q --disable -0 --http1.0 --http1.1 --http2 --http3 --compressed --globoff -g"))},
		{Name: "wget", Aliases: []string{"wget2"}, Effects: Network, Options: wgetOpts},
		{Name: "nc", Aliases: []string{"ncat", "netcat", "nc.traditional", "nc.openbsd", "busybox-nc"}, Effects: Network,
			Options: join(ops(argE("--exec -e", Exec, Listen), argE("--sh-exec -c", Exec, Listen), argE("--lua-exec", Code, Listen), flag("--listen -l", 0)),
				args("-p -s -w -i -q -x -X -W -T -O -P -I -V -M -m --proxy --proxy-type --source --wait"), flags("-z -u -v -n -k -N -d -D -4 -6 -U -C -t"))},
		{Name: "socat", Effects: Network, Refine: refineSocat, Options: join(ops(flag("-V", DryRun), flag("-h", DryRun)), args("-d -D -l -L -T -t -b -W -c -S"), flags("-u -U -g -v -x -r -R -4 -6 -lf -ly -lm -lp -lu -lh"))},
		{Name: "mosh", Effects: Network, StopAtOperand: true, Options: ops(arg("--ssh", Exec), arg("--port -p", 0), arg("--server", Exec), arg("--predict", 0)),
			Operands: []OperandRule{{Index: 0, Effects: Target}, {All: true, From: 1, Effects: Exec, Invocation: Remote}}},
		// sshfs -o ssh_command=CMD runs CMD in place of ssh; its other -o
		// options go to ssh (ProxyCommand, LocalCommand).
		{Name: "sshfs", Effects: Network, Options: ops(arg("-o", Config), arg("-p", 0), arg("-F", Config), flag("-f", 0), flag("-d", 0), flag("-C", 0),
			flag("-s", 0), flag("-V --version", DryRun), flag("-h --help", DryRun)), ExecKeys: append([]string{"ssh_command", "sshfs_sync"}, sshExec...)},
		// Download tools run hooks: aria2c's --on-download-* event commands,
		// yt-dlp's --exec, tcpdump's -z postrotate command.
		{Name: "aria2c", Effects: Network, Options: join(argsV("--on-download-complete --on-download-start --on-download-pause --on-download-stop --on-download-error --on-bt-download-complete", Exec),
			ops(arg("--dir -d", 0), arg("--out -o", Write), arg("--input-file -i", Read), arg("--conf-path", Config)), args("--max-connection-per-server -x --split -s --max-concurrent-downloads -j"))},
		{Name: "yt-dlp", Aliases: []string{"youtube-dl"}, Effects: Network, Options: join(argsV("--exec --exec-before-download", Exec),
			ops(arg("--output -o", Write), arg("--config-locations", Config), arg("--format -f", 0), arg("--batch-file -a", Read)))},
		{Name: "tcpdump", Options: ops(arg("-z", Exec), arg("-w", Write), arg("-i --interface", 0), arg("-c", 0), arg("-C", 0), arg("-G", 0), arg("-W", 0),
			arg("-r", Read), arg("-s --snapshot-length", 0), arg("-Z --relinquish-privileges", 0), arg("-F", Read), arg("-E", 0), arg("-T", 0), arg("-y", 0),
			flag("-n", 0), flag("-nn", 0), flag("-v", 0), flag("-vv", 0), flag("-A", 0), flag("-X", 0), flag("-e", 0), flag("-l", 0), flag("-q", 0), flag("-D --list-interfaces", 0))},
		// ansible's command, shell and raw modules (command is the
		// default) run the -a text on every host matched, localhost
		// included; the reboot module reboots.
		{Name: "ansible", Effects: Network, Refine: refineAnsible, Options: join(ops(arg("--module-name -m", 0), arg("--args -a", 0)),
			args("--inventory -i --inventory-file --limit -l --user -u --connection -c --become-user --forks -f --timeout -T --extra-vars -e --private-key --key-file --module-path -M --vault-password-file --background -B --poll -P"),
			flags("--become -b --ask-pass -k --ask-become-pass -K --check -C --diff -D --one-line -o --tree -t --verbose -v -vv -vvv --list-hosts --version"))},
		// salt-call runs an execution module on this minion: cmd.* runs
		// its command, system.reboot and friends act on the machine.
		{Name: "salt-call", Refine: refineSaltCall, Options: join(args("--local --out --log-level -l --id --pillar --file-root --config-dir -c --retcode-passthrough --timeout -t"),
			flags("--local --retcode-passthrough -v --verbose --version --help -h"))},
		{Name: "telnet", Aliases: []string{"ftp", "lftp", "tftp"}, Effects: Network, Options: args("-l -n -e -b")},
	}
}

// refineSocat: an address of type EXEC or SYSTEM runs a command with the
// connection as its input and output.
func refineSocat(inv *Invocation) {
	for i := range inv.Operands {
		op := &inv.Operands[i]
		l := lower(op.Value)
		for _, p := range [...]string{"exec:", "system:"} {
			if hasPrefixAfter(l, p) {
				op.Effects |= Exec
				inv.Effects |= Listen
			}
		}
		// OPEN:, CREATE:, GOPEN: and FILE: open the path (for writing
		// when the address is written to); the operand's value is the path.
		for _, p := range [...]string{"open:", "create:", "creat:", "gopen:", "file:"} {
			if strings.HasPrefix(l, p) {
				path := op.Value[len(p):]
				if i := strings.IndexByte(path, ','); i >= 0 {
					path = path[:i]
				}
				op.Value, op.Effects = path, op.Effects|Write
			}
		}
	}
}

// hasPrefixAfter reports whether s starts with p, or holds it after a "!!"
// (socat's two-address form) or a ",".
func hasPrefixAfter(s, p string) bool {
	if len(s) >= len(p) && s[:len(p)] == p {
		return true
	}
	for i := 0; i+len(p) <= len(s); i++ {
		if (s[i] == ',' || s[i] == '!') && i+1+len(p) <= len(s) && s[i+1:i+1+len(p)] == p {
			return true
		}
	}
	return false
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// refineAnsible marks the -a text of the command, shell and raw modules
// (the default module is command) as a command line that runs, and the
// reboot module as Power.
func refineAnsible(inv *Invocation) {
	m, ok := inv.Value("--module-name")
	if !ok {
		m = "command"
	}
	m = strings.TrimPrefix(strings.TrimPrefix(m, "ansible.builtin."), "ansible.legacy.")
	switch m {
	case "command", "shell", "raw", "script", "expect":
		for i := range inv.Options {
			if inv.Options[i].Name == "--args" {
				inv.Options[i].ValueEffects |= Exec
			}
		}
	case "reboot":
		inv.Effects |= Power
	}
}

// refineSaltCall reads the execution function, salt-call's first operand:
// the cmd functions run the words after it; system.reboot, system.poweroff,
// system.halt and system.shutdown act on the machine.
func refineSaltCall(inv *Invocation) {
	if len(inv.Operands) == 0 {
		return
	}
	fn := inv.Operands[0].Value
	switch {
	case strings.HasPrefix(fn, "cmd.") && fn != "cmd.which" && fn != "cmd.has_exec":
		for i := range inv.Operands[1:] {
			inv.Operands[1+i].Effects |= Exec
		}
	case fn == "system.reboot" || fn == "system.poweroff" || fn == "system.halt" || fn == "system.shutdown" || fn == "system.reboot_with_kexec":
		inv.Effects |= Power
	}
}
