# Sourced by memlite-hook and memlite-mcp (POSIX sh: macOS runs /bin/sh as bash 3.2 in
# POSIX mode, Debian as dash; no bashisms, and no external command: hooks run on every
# Claude Code event and PATH may be anything). memlite_pick sets $memlite_py to the
# first usable ABSOLUTE interpreter (never a pyenv shim: ~190 ms a call), in this order:
#   1. $MEMLITE_PYTHON (yours, when set and absolute);
#   2. the plugin's venv, ${CLAUDE_PLUGIN_DATA}/venv/bin/python (built at the first session);
#   3. /opt/homebrew/bin/python3 (Homebrew on Apple silicon);
#   4. /usr/local/bin/python3 (Homebrew on Intel Macs, the python.org installer, a
#      self-built one on Linux);
#   5. /usr/bin/python3: on Linux the system's; on macOS Apple's, only when the Command
#      Line Tools or Xcode are installed. Without them it is an installer stub that pops
#      a dialog and exits non-zero, so it is not run at all: told without a fork by a
#      python3 in the developer directory ($DEVELOPER_DIR, the `xcode-select -s` link
#      /var/db/xcode_select_link, /Library/Developer/CommandLineTools, Xcode.app).
# A Python you installed (3, 4) comes before Apple's 3.9: it is usually 3.11+, which the
# hook needs to build the plugin's venv by itself. Nothing found: memlite_pick fails.
# MEMLITE_LAUNCHER_ROOT (internal, for tests) puts every fixed path of 3-5 under a fake root.

memlite_system_python_is_real() {
    [ -x "$1/usr/bin/xcode-select" ] || return 0  # not macOS: a real interpreter
    for memlite_dev in "${DEVELOPER_DIR:-}" "$1/var/db/xcode_select_link" \
                       "$1/Library/Developer/CommandLineTools" \
                       "$1/Applications/Xcode.app/Contents/Developer"; do
        case "$memlite_dev" in
            /*) if [ -x "$memlite_dev/usr/bin/python3" ]; then return 0; fi ;;
        esac
    done
    return 1
}

memlite_pick() {
    memlite_root=${MEMLITE_LAUNCHER_ROOT:-}
    for memlite_py in "${MEMLITE_PYTHON:-}" \
                      "${CLAUDE_PLUGIN_DATA:+$CLAUDE_PLUGIN_DATA/venv/bin/python}" \
                      "$memlite_root/opt/homebrew/bin/python3" \
                      "$memlite_root/usr/local/bin/python3" "$memlite_root/usr/bin/python3"; do
        case "$memlite_py" in
            /*) ;;
            *) continue ;;
        esac
        [ -x "$memlite_py" ] || continue
        if [ "$memlite_py" = "$memlite_root/usr/bin/python3" ] \
                && ! memlite_system_python_is_real "$memlite_root"; then
            continue
        fi
        return 0
    done
    memlite_py=
    return 1
}
