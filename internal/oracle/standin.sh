#!/bin/sh
# An oracle stand-in for a hardline-class program: it records its name, the
# working directory, what its standard input is, whether POSIXLY_CORRECT is
# in its environment (glibc's getopt then stops at the first operand), and
# each argument with the path it resolves to (for NAME=VALUE arguments,
# VALUE's), then exits 0 having done nothing else.
f=$(mktemp /oracle/log/calls/c.XXXXXXXX 2>/dev/null) || exit 0
{
	printf '%s\000%s\000%s\000%s\000' "${0##*/}" "$PWD" "$(readlink /proc/$$/fd/0)" "${POSIXLY_CORRECT+posix}"
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
