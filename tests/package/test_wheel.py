# SPDX-License-Identifier: MIT
"""optlog's wheel (packaging/wheel/build.sh) as a user on a GPU server meets it: installed with one
`pip install` into a fresh virtual environment that holds only torch and numpy, run from a folder
outside the clone with no PYTHONPATH and no OPTLOG; and installed on a host over SSH by `optlog host
setup`, against the tests' own sshd (tests/remote/sshhost.sh), where `optlog run --host` then trains.

CTest runs it with the interpreter of the environment the wheel was built in (packaging/pytorch.sh)
and sets OPTLOG_TEST_WHEEL_DIR (dist/) and OPTLOG_SOURCE_DIR.
"""
import glob
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

SOURCE = os.environ["OPTLOG_SOURCE_DIR"]
WHEEL_DIR = os.environ["OPTLOG_TEST_WHEEL_DIR"]
TORCH = importlib.metadata.version("torch")
SSHHOST = os.path.join(SOURCE, "tests", "remote", "sshhost.sh")
# What the issue allows a wheel without torch to weigh.
MAX_WHEEL_BYTES = 50 * 1000 * 1000
# Quick runs: the smoke preset on generated text, as the remote tests train; untuned, and without
# the matmul peak a fresh cache would measure first (minutes where BF16 products have no kernel:
# 1 GFLOP/s on an AVX2 EPYC). The caches are the suite's (XDG_CACHE_HOME, from CTest), where the
# callbacks' test finds the peak `optlog tune --peak-only` measured once.
SMOKE = ["--preset", "smoke", "--set", "data.corpus=\"generated\"", "--set", "train.steps=8"]
QUICK = {"OPTLOG_PROBE_UNTUNED": "0", "OPTLOG_MATMUL_PEAK": "0"}


def torch_file():
    """This environment's torch/__init__.py, found without importing torch (seconds)."""
    return importlib.util.find_spec("torch").origin


def torch_only_environment():
    """A virtual environment holding torch (this one's version) and numpy alone, made once per
    machine from pip's cache (about 2.5 min, 4.7 GB); each test copies it with hard links, which
    pip never writes through (it replaces files, never edits them in place)."""
    cache = os.path.join(os.path.expanduser("~"), ".cache", "optlog", f"torch-{TORCH}-only")
    if not os.path.exists(os.path.join(cache, "ready")):
        shutil.rmtree(cache + ".part", ignore_errors=True)
        subprocess.run(["/usr/bin/python3", "-m", "venv", cache + ".part"], check=True)
        subprocess.run([os.path.join(cache + ".part", "bin", "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", f"torch=={TORCH}", "numpy"], check=True)
        open(os.path.join(cache + ".part", "ready"), "w").close()
        shutil.rmtree(cache, ignore_errors=True)
        os.rename(cache + ".part", cache)
    return cache


def fresh_environment(folder):
    """A new environment at `folder`, a hard-linked copy of the torch-only one: its own site-packages."""
    subprocess.run(["cp", "-al", torch_only_environment(), folder], check=True)
    os.remove(os.path.join(folder, "ready"))
    return folder


def the_wheel():
    wheels = glob.glob(os.path.join(WHEEL_DIR, "optlog-*.whl"))
    if len(wheels) != 1:
        raise AssertionError(f"expected one wheel in {WHEEL_DIR} (packaging/pytorch.sh wheel), found {wheels}")
    return wheels[0]


class Wheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wheel = the_wheel()
        cls.dir = tempfile.TemporaryDirectory(prefix="optlog-wheel-")
        cls.outside = os.path.join(cls.dir.name, "work")  # no clone here, nothing of it on any path
        os.mkdir(cls.outside)
        cls.venv = fresh_environment(os.path.join(cls.dir.name, "venv"))
        cls.pip(cls.venv, "install", "--no-index", cls.wheel)  # its torch pin met by what is there

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    @staticmethod
    def pip(venv, *args):
        done = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "--disable-pip-version-check",
                               *args], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise AssertionError(f"pip {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
        return done.stdout

    @classmethod
    def environment(cls, venv, **extra):
        """As an activated environment: its bin first on PATH, no PYTHONPATH, no OPTLOG."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OPTLOG", "OPTLOG_SOURCE_DIR")}
        env.update(PATH=os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
                   VIRTUAL_ENV=venv, XDG_CONFIG_HOME=os.path.join(cls.dir.name, "config"),
                   XDG_DATA_HOME=os.path.join(cls.dir.name, "data"), **QUICK, **extra)
        return env

    def run_in(self, venv, *command, expect=0, env=None, timeout=600):
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, cwd=self.outside,
                              env=env or self.environment(venv))
        self.assertEqual(done.returncode, expect, f"{' '.join(command)}: {done.stdout[-1500:]}{done.stderr[-3000:]}")
        return done

    def test_the_wheel_says_what_it_needs(self):
        self.assertLessEqual(os.path.getsize(self.wheel), MAX_WHEEL_BYTES)
        name = os.path.basename(self.wheel)
        self.assertRegex(name, r"^optlog-[0-9.]+-py3-none-manylinux_2_\d+_x86_64\.whl$")
        with zipfile.ZipFile(self.wheel) as wheel:
            metadata = next(wheel.read(n).decode() for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            binaries = {n for n in wheel.namelist() if "/_bin/" in n and not n.endswith("/")}
        torch_minor = ".".join(TORCH.split(".")[:2])
        self.assertIn(f"Requires-Dist: torch=={torch_minor}.*", metadata)
        self.assertIn("Requires-Python: >=3.10", metadata)
        self.assertEqual(binaries, {"optlog/_bin/optlog", "optlog/_bin/optlog-engine"})
        # Only torch's libraries, and the CUDA libraries of its nvidia packages, are outside the wheel
        # and outside the manylinux policy: every library `auditwheel show` lists as external is
        # found in this environment's torch or nvidia folders (where the engine's run path looks).
        site = os.path.dirname(os.path.dirname(torch_file()))
        folders = [os.path.join(site, "torch", "lib")] + glob.glob(os.path.join(site, "nvidia", "*", "lib"))
        shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", self.wheel], capture_output=True,
                               text=True, env=dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(folders)))
        self.assertEqual(shown.returncode, 0, shown.stderr)
        external = json.loads(shown.stdout)["external_libs"]
        self.assertIn("libtorch_cpu.so", external)
        for library, path in external.items():
            self.assertTrue(path and any(path.startswith(folder + os.sep) for folder in folders), f"{library}: {path}")

    def test_installed_it_trains_compares_and_records(self):
        python = os.path.join(self.venv, "bin", "python")
        version = self.run_in(self.venv, "optlog", "--version").stdout
        self.assertIn(f"LibTorch {TORCH.split('+')[0]}", version)
        study = os.path.join(self.outside, "wheel.sqlite")
        self.run_in(self.venv, "optlog", "run", "--db", study, "--set", "name=\"engine\"", *SMOKE)
        compared = self.run_in(self.venv, "optlog", "compare", study).stdout
        self.assertIn("engine", compared)
        # Your own trainer, through `import optlog`, records with the wheel's own optlog.
        trainer = os.path.join(SOURCE, "resources", "examples", "pytorch", "train.py")
        self.run_in(self.venv, python, trainer, "--study", study, "--name", "python", "--steps", "6")
        runs = json.loads(self.run_in(self.venv, "optlog", "export", study, "--format", "json").stdout)["runs"]
        self.assertEqual({r["name"]: r["outcome"] for r in runs}, {"engine": "completed", "python": "completed"})
        found = self.run_in(self.venv, python, "-c", "import optlog.recorder as r; print(r.optlog_binary())").stdout
        self.assertEqual(os.path.realpath(found.strip()),
                         os.path.realpath(glob.glob(os.path.join(self.venv, "lib", "python3*", "site-packages",
                                                                 "optlog", "_bin", "optlog"))[0]))

    def test_the_lightning_callback(self):
        self.pip(self.venv, "install", "-q", "lightning==2.6.6")
        callbacks = os.path.join(SOURCE, "tests", "python", "test_trainer_callbacks.py")
        self.run_in(self.venv, os.path.join(self.venv, "bin", "python"), callbacks, "TrainerCallbacks.test_lightning",
                    timeout=900)


class HostSetup(unittest.TestCase):
    """`optlog host setup` from a laptop (this environment's optlog) to a host whose environment is a
    second fresh one, over the tests' own sshd on the loopback."""

    @classmethod
    def setUpClass(cls):
        cls.wheel = the_wheel()
        cls.dir = tempfile.TemporaryDirectory(prefix="optlog-hostsetup-")
        cls.ssh = os.path.join(cls.dir.name, "ssh")
        started = subprocess.run([SSHHOST, "start", cls.ssh], capture_output=True, text=True, timeout=120,
                                 env=dict(os.environ, OPTLOG_SSHHOST_SETENV=" ".join(f"{k}={v}" for k, v in
                                                                                    QUICK.items())))
        if started.returncode == 77:
            raise unittest.SkipTest(started.stderr)
        assert started.returncode == 0, started.stderr
        cls.host = "optlog-test-host"
        cls.laptop = fresh_environment(os.path.join(cls.dir.name, "laptop"))
        Wheel.pip(cls.laptop, "install", "--no-index", cls.wheel)
        cls.hostenv = fresh_environment(os.path.join(cls.dir.name, "host"))

    @classmethod
    def tearDownClass(cls):
        subprocess.run([SSHHOST, "stop", cls.ssh], timeout=120)
        cls.dir.cleanup()

    def optlog(self, *args, expect=0, timeout=900):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OPTLOG")}
        env.update(PATH=os.path.join(self.laptop, "bin") + os.pathsep + env.get("PATH", ""),
                   OPTLOG_SSH_CONFIG=os.path.join(self.ssh, "ssh_config"),
                   XDG_CONFIG_HOME=os.path.join(self.dir.name, "laptop-config"),
                   XDG_DATA_HOME=os.path.join(self.dir.name, "laptop-data"), **QUICK)
        done = subprocess.run(["optlog", *args], capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=self.dir.name)
        self.assertEqual(done.returncode, expect, f"optlog {' '.join(args)}: {done.stdout[-1500:]}{done.stderr[-3000:]}")
        return done

    def hosts(self):
        path = os.path.join(self.dir.name, "laptop-config", "optlog", "hosts.json")
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as file:
            return json.load(file)

    def fake_python(self, name, torch_version):
        """An environment whose torch says `torch_version` (None: no torch at all)."""
        venv = os.path.join(self.dir.name, name)
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv], check=True)
        if torch_version:
            site = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))[0]
            os.makedirs(os.path.join(site, "torch", "version"))
            with open(os.path.join(site, "torch", "__init__.py"), "w") as f:
                f.write(f"__version__ = '{torch_version}'\nfrom . import version\n")
            with open(os.path.join(site, "torch", "version", "__init__.py"), "w") as f:
                f.write("cuda = None\n")
        return os.path.join(venv, "bin", "python")

    def test_1_refusals_in_the_hosts_own_words(self):
        cases = [
            (["--python", os.path.join(self.dir.name, "nowhere", "python"), "--wheel", self.wheel], "has no Python at"),
            (["--python", self.fake_python("notorch", None), "--wheel", self.wheel], "No module named 'torch'"),
            (["--python", self.fake_python("newer", "2.99.0"), "--wheel", self.wheel],
             "was built for torch " + ".".join(TORCH.split(".")[:2]) + ", and optlog-test-host's is 2.99.0"),
            (["--python", self.fake_python("older", "1.12.1"), "--sdist", self.wheel], "not a .tar.gz file"),
            (["--python", self.fake_python("older2", "1.12.1")], "carries no sdist"),
            (["--python", "python3", "--wheel", os.path.join(self.dir.name, "no.whl")], "no such file"),
        ]
        sdists = glob.glob(os.path.join(WHEEL_DIR, "optlog-*.tar.gz"))
        if sdists:
            cases.append((["--python", self.fake_python("older3", "1.12.1"), "--sdist", sdists[0]],
                          "is older than any optlog builds against (1.13)"))
        for args, said in cases:
            done = self.optlog("host", "setup", self.host, *args, expect=2)
            self.assertIn(said, done.stderr, args)
            self.assertIsNone(self.hosts(), "a refused setup remembers nothing")
        done = self.optlog("host", "setup", "--python", "python3", "--wheel", self.wheel, "--", "-oProxyCommand=touch x",
                           expect=2)
        self.assertIn("-oProxyCommand=touch x", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "x")))
        self.assertIsNone(self.hosts())

    def test_2_set_up_then_trains_there_and_follows_here(self):
        python = os.path.join(self.hostenv, "bin", "python")
        done = self.optlog("host", "setup", self.host, "--python", python, "--wheel", self.wheel)
        self.assertIn(f"has torch {TORCH}", done.stderr)
        # Remembered with the host environment's own optlog, which `host check` reached.
        installed = os.path.join(self.hostenv, "bin", "optlog")
        self.assertEqual(self.hosts(), {self.host: {"optlog": installed}})
        self.assertIn("reachable", done.stdout)
        study = os.path.join(self.dir.name, "laptop.sqlite")
        self.optlog("run", "--host", self.host, "--db", study, "--set", "name=\"there\"", *SMOKE)
        runs = json.loads(self.optlog("export", study, "--format", "json").stdout)["runs"]
        self.assertEqual([(r["name"], r["outcome"]) for r in runs], [("there", "completed")])
        self.assertEqual(len(runs[0]["metrics"]), 8)
        # It trained there, into a study in the host's own data folder (sshhost.sh's XDG_DATA_HOME).
        hosted = glob.glob(os.path.join(self.ssh, "host", "data", "optlog", "hosted", "*.sqlite"))
        self.assertEqual(len(hosted), 1, hosted)


if __name__ == "__main__":
    unittest.main()
