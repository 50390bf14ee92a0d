"""The shipped captures in the real Wireshark GUI (wireshark-qt under Xvfb),
as a user opens them: the built plugin in the personal plugin folder, each
capture opened with the packet that matters selected (the one a revisit used
to break) or with the statistics/expert dialog open, a screenshot of each
window into the test's output directory (VITCP_GUI_SHOTS), the GUI's own log
free of dissector bugs, and tshark's -2 -V and -z expert runs (same plugin,
same profile) checking what the screenshots show: no dissector bug, the
protocol in the Protocol column, and the expert findings each capture was
made to show. The Statistics menu is opened with xdotool (Alt+S) and shot: it
lists IFT, PacketWay EEP, VI/TCP and WARP. Run by ctest under the label "gui"
(needs wireshark, Xvfb, ImageMagick, xwininfo and xdotool)."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import tsharklib
from test_shipped_captures import EXPECTED_RULES, expert_table

SOURCE = os.environ.get("VITCP_SOURCE_DIR", "")
SHOTS = os.environ.get("VITCP_GUI_SHOTS", "gui-screenshots")

# capture, extra wireshark arguments, windows to shoot (name: title part),
# protocol and the filter of the packets whose Protocol column shows it.
CASES = [
    ("ift-session.pcap", ["-g", "8"], {"main": "ift-session.pcap"}, ("IFT", "ift.ai")),
    ("eep-frames.pcap", ["-g", "10"], {"main": "eep-frames.pcap"}, ("PKTWAY", "pktway")),
    # frame 9 (bad CRC) left unselected so its colour shows; 10 selected
    ("vitcp-bad-crc.pcap", ["-g", "10"], {"main": "vitcp-bad-crc.pcap"}, ("VI/TCP", "vitcp")),
    ("vitcp-retx-differs.pcap", ["-g", "12"], {"main": "vitcp-retx-differs.pcap"}, ("VI/TCP", "vitcp")),
    ("warp-bad-adler.pcap", ["-z", "expert"], {"expert": "Expert Information"}, ("WARP", "warp")),
    ("eep-oversized-dl.pcap", ["-z", "expert"], {"expert": "Expert Information"}, ("PKTWAY", "pktway")),
    ("vitcp-full.pcap", ["-z", "vitcp,srt"], {"srt": "VI/TCP Service Response Time"}, ("VI/TCP", "vitcp")),
]


def window_ids(display, title_part):
    out = subprocess.run(["xwininfo", "-display", display, "-root", "-tree"], capture_output=True, text=True).stdout
    ids = []
    for line in out.splitlines():
        line = line.strip()
        if '"' in line and title_part in line.split('"')[1] and not line.split('"')[1].startswith("Qt "):
            geom = line.split(")")[-1].split()[0] if ")" in line else ""
            if geom and not geom.startswith("1x1"):
                ids.append(line.split()[0])
    return ids


class WiresharkGui(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(SHOTS, exist_ok=True)
        cls.xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1600x1000x24", "-ac",
                                     "-nolisten", "tcp"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        cls.display = ":" + cls.xvfb.stdout.readline().strip()
        cls.home = tempfile.mkdtemp(prefix="vitcp-gui-")
        plugins = os.path.join(cls.home, ".local/lib/wireshark/plugins/4.0/epan")
        os.makedirs(plugins)
        shutil.copy(tsharklib.plugin_path(), os.path.join(plugins, "vitcp.so"))
        conf = os.path.join(cls.home, ".config/wireshark")
        os.makedirs(conf)
        with open(os.path.join(conf, "recent_common"), "w") as f:
            f.write("gui.geometry_main_x: 0\ngui.geometry_main_y: 0\ngui.geometry_main_width: 1600\n"
                    "gui.geometry_main_height: 1000\nprivs.warn_if_elevated: FALSE\n")
        with open(os.path.join(conf, "recent"), "w") as f:
            f.write("gui.geometry_main_upper_pane: 380\n")
        # Our colouring rules, as the documentation tells a user to install them.
        shutil.copy(os.path.join(SOURCE, "dissector", "vitcp.colorfilters"), os.path.join(conf, "colorfilters"))
        os.makedirs(os.path.join(cls.home, "no-extcap"))
        for root, dirs, files in os.walk(cls.home):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o777)
            for name in files:
                os.chmod(os.path.join(root, name), 0o666)
        os.chmod(cls.home, 0o777)

    @classmethod
    def tearDownClass(cls):
        cls.xvfb.terminate()
        cls.xvfb.wait(timeout=10)
        cls.xvfb.stdout.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    def open_in_gui(self, capture, args, windows, menu=None):
        """Start wireshark on a copy of capture, wait for its windows, shoot them; returns its log.
        menu: called with the main window's id once it is shown."""
        source = capture if os.path.isabs(capture) else os.path.join(SOURCE, "captures", capture)
        capture = os.path.basename(capture)
        path = os.path.join(self.home, capture)
        shutil.copy(source, path)
        os.chmod(path, 0o644)
        env = {"HOME": self.home, "DISPLAY": self.display, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
               "WIRESHARK_EXTCAP_DIR": os.path.join(self.home, "no-extcap"), "XDG_RUNTIME_DIR": self.home}
        if os.environ.get("VITCP_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["VITCP_PRELOAD"]
            env["ASAN_OPTIONS"] = "detect_leaks=0"
        cmd = ["wireshark", "-r", path] + args
        if os.geteuid() == 0:  # as root Wireshark ignores the personal plugin folder
            cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env"] + \
                  ["%s=%s" % kv for kv in env.items()] + cmd
            env = None
        log = open(os.path.join(SHOTS, capture + ".log"), "w+")
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 90
            while time.time() < deadline and not all(window_ids(self.display, t) for t in windows.values()):
                self.assertIsNone(proc.poll(), "wireshark exited early: see %s.log" % capture)
                time.sleep(0.5)
            time.sleep(3)  # let the packet list and dialogs fill
            if menu:
                found = subprocess.run(["xdotool", "search", "--name", windows["main"]], capture_output=True, text=True,
                                       env={"DISPLAY": self.display, "PATH": "/usr/bin:/bin"}).stdout.split()
                self.assertTrue(found, "xdotool does not find " + windows["main"])
                menu(found[0])
            for name, title in windows.items():
                ids = window_ids(self.display, title)
                self.assertTrue(ids, "no window titled %r for %s" % (title, capture))
                shot = os.path.join(SHOTS, "%s-%s.png" % (capture.rsplit(".", 1)[0], name))
                subprocess.run(["import", "-display", self.display, "-window", ids[0], shot], check=True)
                colours = subprocess.run(["identify", "-format", "%k", shot], capture_output=True, text=True).stdout
                self.assertGreater(int(colours or 0), 20, "blank screenshot " + shot)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.seek(0)
        text = log.read()
        log.close()
        return text

    def xdotool(self, *args):
        subprocess.run(["xdotool"] + list(args), env={"DISPLAY": self.display, "PATH": "/usr/bin:/bin"}, check=True)

    def shoot_statistics_menu(self, main, shot_name):
        """Alt+S on the main window; the screenshot must differ from the one before it where the
        menu drops down (x 330..800, y 30..990). Keystrokes can be lost on a loaded machine: three tries."""
        before = os.path.join(SHOTS, shot_name + "-before.png")
        after = os.path.join(SHOTS, shot_name + "-menu.png")
        for attempt in range(3):
            subprocess.run(["import", "-display", self.display, "-window", "root", before], check=True)
            self.xdotool("windowfocus", main)
            time.sleep(1 + attempt)
            self.xdotool("key", "alt+s")
            time.sleep(2 + attempt)
            subprocess.run(["import", "-display", self.display, "-window", "root", after], check=True)
            region = "[470x960+330+30]"
            diff = subprocess.run(["compare", "-metric", "AE", before + region, after + region, "null:"],
                                  capture_output=True, text=True)
            if float((diff.stderr.split() or ["0"])[0]) > 50000:
                os.remove(before)
                self.xdotool("key", "Escape")
                return True
            self.xdotool("key", "Escape")
        return False

    def test_statistics_menu_lists_the_protocols(self):
        # The screenshot shows IFT, PacketWay EEP, VI/TCP and WARP at the end of the
        # menu (registered stats trees); tshark -z <proto>,tree checks their content
        # (test_statistics.py), the same registration the menu comes from.
        capture = "vitcp-full.pcap"
        shots = {}

        def menu(main):
            shots["menu"] = self.shoot_statistics_menu(main, "statistics")

        self.open_in_gui(capture, [], {"main": capture}, menu=menu)
        self.assertTrue(shots.get("menu"), "the Statistics menu did not open")
        listed = tsharklib.run_raw(["-z", "help"], with_stderr=True)
        for name in ("vitcp,tree", "ift,tree", "warp,tree", "pktway,tree", "vitcp,srt"):
            self.assertIn(name, (listed[0] + listed[1]).split())

    def test_eep_router_pair_both_ways(self):
        """Issue 31 (P31): a router with an address per interface (UDP in on
        127.77.0.10, out from 127.77.0.11) that did not shift the TAIL; the
        packet list with the pair as columns (pktway.first_hop_in, pktway.forwarded_in): the
        pair both ways and the router rule. docs/img/eep-router-pair.png is
        this screenshot."""
        import sys
        sys.path.insert(0, os.path.join(SOURCE, "tests", "independent"))
        from eep_pcap import l2rh, message, udp, write_pcap
        a, r_in, r_out, b = (bytes([127, 77, 0, n]) for n in (2, 10, 11, 3))
        data = b"a data block of forty bytes, unchanged."
        mac = [bytes.fromhex(h) for h in ("02000000000a", "020000000010", "020000000011", "02000000000b")]
        frames = [udp(message(pt=0x0001, data=data, ei=1, records=l2rh(b"\x03\x01\x04")), src=a, dst=r_in,
                      smac=mac[0], dmac=mac[1]),
                  udp(message(pt=0x0001, data=data, ei=1), src=r_out, dst=b, smac=mac[2], dmac=mac[3])]
        cap = write_pcap(os.path.join(tempfile.mkdtemp(prefix="vitcp-gui-eep-"), "eep-router-pair.pcap"), frames,
                         [0, 2000])

        # the pair as two columns of the packet list (Edit > Preferences > Columns, or right-click the
        # field > Apply as Column): each row names the other hop
        columns = ('gui.column.format:"No.","%m","Time","%t","Source","%s","Destination","%d","Protocol","%p",'
                   '"First hop in","%Cus:pktway.first_hop_in:0:R","Forwarded in","%Cus:pktway.forwarded_in:0:R",'
                   '"Info","%i"')
        gui_log = self.open_in_gui(cap, ["-g", "2", "-o", columns], {"main": "eep-router-pair.pcap"})
        self.assertNotIn("Dissector bug", gui_log)
        out = tsharklib.run(cap, ["-2", "-V"])
        self.assertIn("First hop in: 1", out)
        self.assertIn("Forwarded in: 2", out)
        self.assertIn("[EEP-10-EI-SHIFT]", out)

    def test_captures_open_clean(self):
        for capture, args, windows, (proto, flt) in CASES:
            with self.subTest(capture=capture):
                gui_log = self.open_in_gui(capture, args, windows)
                self.assertNotIn("Dissector bug", gui_log)
                cap = os.path.join(SOURCE, "captures", capture)
                out, err = tsharklib.run(cap, ["-2", "-V"], with_stderr=True)
                self.assertNotIn("Dissector bug", out + err)
                self.assertNotIn("Malformed Packet", out)
                cols = tsharklib.fields(cap, ["_ws.col.Protocol"], display_filter=flt, two_pass=True)
                self.assertEqual({c[0] for c in cols}, {proto})
                experts = expert_table(tsharklib.run(cap, ["-2", "-q", "-z", "expert"]))
                ours = {r[2].split("]")[0].lstrip("[") for r in experts if r[2].startswith("[")}
                self.assertEqual(ours, EXPECTED_RULES.get(capture, set()))
                self.assertEqual([r for r in experts if r[0] in ("Errors", "Warns") and not r[2].startswith("[")], [])


if __name__ == "__main__":
    unittest.main()
