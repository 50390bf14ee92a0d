"""Run the stock tshark with the freshly built vitcp plugin.

tshark running as root ignores the personal plugin folder, so as root the
plugin is copied into a private HOME and tshark runs as 'nobody' through
setpriv. Every run first checks (once) that the plugin tshark loads is ours.
"""
import json
import os
import shutil
import subprocess
import tempfile

_home = None


def plugin_path():
    path = os.environ.get("VITCP_PLUGIN")
    if not path or not os.path.exists(path):
        raise RuntimeError("VITCP_PLUGIN must name the built vitcp.so (got %r)" % path)
    return path


def _setup_home():
    global _home
    if _home:
        return _home
    home = tempfile.mkdtemp(prefix="vitcp-tshark-")
    os.chmod(home, 0o755)
    dest = os.path.join(home, ".local/lib/wireshark/plugins/4.0/epan")
    os.makedirs(dest)
    shutil.copy(plugin_path(), os.path.join(dest, "vitcp.so"))
    for root, dirs, files in os.walk(home):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    _home = home
    out = run_raw(["-G", "plugins"])
    if os.path.join(dest, "vitcp.so") not in out:
        raise RuntimeError("tshark did not load the built plugin:\n" + out)
    return home


def _readable_copy(path):
    """tshark runs as nobody: give it a copy it can read."""
    tmp = os.path.join(_setup_home(), "in-" + os.path.basename(path))
    shutil.copy(path, tmp)
    os.chmod(tmp, 0o644)
    return tmp


def run_raw(args, env_extra=None, with_stderr=False):
    home = _home or _setup_home()
    # No extcap helpers: they are not needed to read files, and under a
    # preloaded sanitizer runtime some of them hang.
    noextcap = os.path.join(home, "no-extcap")
    os.makedirs(noextcap, exist_ok=True)
    env = {"HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "WIRESHARK_EXTCAP_DIR": noextcap}
    preload = os.environ.get("VITCP_PRELOAD", "")
    if preload:
        # A sanitizer-built plugin inside the stock tshark: the runtime must
        # come first. Wireshark's own leaks at exit are not ours to report.
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    if env_extra:
        env.update(env_extra)
    cmd = ["tshark"] + list(args)
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env"] + \
              ["%s=%s" % kv for kv in env.items()] + cmd
        env = None
    proc = subprocess.run(cmd, env=env, cwd=home, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError("tshark %s failed (%d): %s" % (" ".join(args), proc.returncode, proc.stderr))
    return (proc.stdout, proc.stderr) if with_stderr else proc.stdout


def run(capture, args, env_extra=None, with_stderr=False):
    """tshark -r CAPTURE ARGS... with the plugin; returns stdout (and stderr)."""
    return run_raw(["-r", _readable_copy(capture)] + list(args), env_extra, with_stderr)


def fields(capture, names, display_filter=None, two_pass=False, extra=()):
    """One list of values per packet for the given -e fields."""
    args = ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for n in names:
        args += ["-e", n]
    if display_filter:
        args += ["-Y", display_filter]
    if two_pass:
        args.append("-2")
    args += list(extra)
    out = run(capture, args)
    return [line.split("\t") for line in out.splitlines()]


def packets_json(capture, two_pass=False, extra=()):
    args = ["-T", "json"] + (["-2"] if two_pass else []) + list(extra)
    return json.loads(run(capture, args) or "[]")
