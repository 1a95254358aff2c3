#!/bin/sh
# An oracle stand-in for a hardline-class program: it records the program's
# name, the working directory, what its standard input is, whether POSIXLY_CORRECT is
# in its environment (glibc's getopt then stops at the first operand), and
# each argument with the path it resolves to (for NAME=VALUE arguments,
# VALUE's), then exits 0 having done nothing else.
# The name is the one it was run by when that names a stand-in (/sbin/reboot,
# a link to systemctl on this host, is reboot); otherwise the program this
# copy of the script stands for (written into it as @NAME@), so that a copy
# or a link under another name (cp /bin/rm x; ./x) is still that program.
self=${0##*/}
[ -f "/oracle/standin/$self" ] && [ "$self" != passthrough ] || self='@NAME@'
f=$(mktemp /oracle/log/calls/c.XXXXXXXX 2>/dev/null) || exit 0
{
	printf '%s\000%s\000%s\000%s\000' "$self" "$PWD" "$(readlink /proc/$$/fd/0)" "${POSIXLY_CORRECT+posix}"
	for a do
		r=
		v=${a#*=}
		if [ -e "$a" ] || [ -L "$a" ]; then
			r=$(readlink -f -- "$a")
		elif [ "$v" != "$a" ] && { [ -e "$v" ] || [ -L "$v" ]; }; then
			r=$(readlink -f -- "$v")
		fi
		printf '%s\000%s\000' "$a" "$r"
	done
} > "$f"
exit 0
