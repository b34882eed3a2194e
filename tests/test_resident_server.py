"""The resident server (cuda2hip/resident/): a `check` run through it is the `check` run on its
own — output, exit status, files read — and the server is used only where it is safe to."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from resident_support import (KERNEL, checks_served, make_project, run_cuda2hip, server_env,  # noqa: F401
                              server_status, socket_path_of, wait_until)


def test_check_through_the_server_is_the_check_run_on_its_own(server_env, tmp_path):
    project = make_project(tmp_path)
    start = run_cuda2hip(["server", "start"], server_env, project)
    assert start.returncode == 0 and "started the server" in start.stdout, start.stdout + start.stderr
    alone = dict(server_env, CUDA2HIP_NO_SERVER="1")
    calls = [["check", "--no-cache", "src/a.cu"], ["check", "--no-cache", "--format", "json", "src"],
             ["check", "--no-cache", "--format", "concise", "--statistics", "src/b.cu", "src/a.cu"],
             ["check", "--no-cache", "--format", "sarif", "src"], ["check", "src/missing.cu"],
             ["check", "--no-cache", "--select", "NOPE", "src"], ["check", "--version"]]
    for args in calls:
        served, here = run_cuda2hip(args, server_env, project), run_cuda2hip(args, alone, project)
        assert (served.returncode, served.stdout, served.stderr) == (here.returncode, here.stdout, here.stderr), args
    first = run_cuda2hip(calls[0], server_env, project)
    assert first.returncode == 1 and "HIP101" in first.stdout and "HIP100" not in first.stdout, first.stdout
    assert checks_served(server_env, project) == len(calls) + 1
    # other commands run in the caller's process
    assert run_cuda2hip(["rules"], server_env, project).returncode == 0
    assert checks_served(server_env, project) == len(calls) + 1


def test_fix_through_the_server_writes_what_it_writes_on_its_own(server_env, tmp_path):
    import shutil

    served_tree, own_tree = make_project(tmp_path), tmp_path / "alone"
    (served_tree / "src" / "a.cu").chmod(0o640)
    shutil.copytree(served_tree, own_tree)
    assert run_cuda2hip(["server", "start"], server_env, served_tree).returncode == 0
    alone = dict(server_env, CUDA2HIP_NO_SERVER="1")
    for args in (["fix", "--no-cache", "--diff", "src"], ["fix", "--no-cache", "src/a.cu"],
                 ["fix", "--no-cache", "--unsafe-fixes", "src"], ["fix", "--no-cache", "--output-dir", "out", "src"]):
        served, here = run_cuda2hip(args, server_env, served_tree), run_cuda2hip(args, alone, own_tree)
        assert (served.returncode, served.stdout, served.stderr) == (here.returncode, here.stdout, here.stderr), args
    assert checks_served(server_env, served_tree) == 4
    files = sorted(p.relative_to(served_tree) for p in served_tree.rglob("*") if p.is_file())
    assert Path("out/src/a.cu") in files or Path("out/a.cu") in files, files
    for rel in files:
        a, b = served_tree / rel, own_tree / rel
        assert a.read_bytes() == b.read_bytes() and a.stat().st_mode == b.stat().st_mode, rel
    assert "hipMalloc" in (served_tree / "src" / "a.cu").read_text()
    assert (served_tree / "src" / "a.cu").stat().st_mode & 0o777 == 0o640


def test_a_check_waiting_for_a_primed_fork_is_served_by_it(server_env, tmp_path):
    """`server status` says when the fork made ahead is primed; a check started then runs in it."""
    project = make_project(tmp_path)
    assert run_cuda2hip(["server", "start"], server_env, project).returncode == 0
    for n in (1, 2):
        assert wait_until(lambda: "next fork ready" in (server_status(server_env, project) or "")), server_status(server_env, project)
        assert run_cuda2hip(["check", "--no-cache", "src/a.cu"], server_env, project).returncode == 1
        assert f" {n} checks served ({n} by a fork made ahead)" in server_status(server_env, project)


def test_a_check_sees_files_changed_after_the_server_started(server_env, tmp_path):
    project = make_project(tmp_path)
    assert run_cuda2hip(["server", "start"], server_env, project).returncode == 0
    before = run_cuda2hip(["check", "--no-cache", "--format", "concise", "src/a.cu"], server_env, project).stdout
    assert "HIP100" not in before and "a.cu:8:" not in before, before
    (project / "cuda2hip.toml").write_text("ignore = []\n")
    (project / "src" / "a.cu").write_text(KERNEL + "void g() { cudaDeviceSynchronize(); }\n")
    r = run_cuda2hip(["check", "--no-cache", "--format", "concise", "src/a.cu"], server_env, project)
    assert "HIP100" in r.stdout and "a.cu:8:" in r.stdout and "cudaDeviceSynchronize" in r.stdout, r.stdout
    assert checks_served(server_env, project) == 2


def test_standard_input_and_exit_status_reach_the_check(server_env, tmp_path):
    project = make_project(tmp_path)
    assert run_cuda2hip(["server", "start"], server_env, project).returncode == 0
    clean = project / "clean.cu"
    clean.write_text("int main() { return 0; }\n")
    assert run_cuda2hip(["check", "--no-cache", "clean.cu"], server_env, project).returncode == 0
    # a closed stdout: the check's write fails as it would in-process, not in the server
    r = subprocess.run([sys.executable, "-m", "cuda2hip", "check", "--no-cache", "src/a.cu"], env=server_env,
                       cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1
    assert checks_served(server_env, project) == 2


def test_a_dead_servers_socket_is_not_used(server_env, tmp_path):
    project = make_project(tmp_path)
    path = socket_path_of(server_env)  # as left behind by a server of this code that was killed
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)
    dead.close()
    alone = dict(server_env, CUDA2HIP_NO_SERVER="1")
    served, here = (run_cuda2hip(["check", "--no-cache", "src"], e, project) for e in (server_env, alone))
    assert (served.returncode, served.stdout, served.stderr) == (here.returncode, here.stdout, here.stderr)
    # a new server replaces it
    assert run_cuda2hip(["server", "start"], server_env, project).returncode == 0
    run_cuda2hip(["check", "--no-cache", "src"], server_env, project)
    assert checks_served(server_env, project) == 1


def test_a_folder_other_users_can_write_is_never_used(server_env, tmp_path):
    runtime = Path(server_env["CUDA2HIP_RUNTIME_DIR"])
    runtime.chmod(0o755)
    project = make_project(tmp_path)
    r = run_cuda2hip(["server", "start"], server_env, project)
    assert r.returncode == 2 and "open to other users" in r.stderr and "chmod 700" in r.stderr, r.stderr
    assert not list(runtime.glob("*.sock"))
    status = run_cuda2hip(["server", "status"], server_env, project)
    assert status.returncode == 1 and "open to other users" in status.stdout
    assert run_cuda2hip(["check", "--no-cache", "src"], server_env, project).returncode == 1


def test_check_server_starts_one_for_the_next_calls(server_env, tmp_path):
    project = make_project(tmp_path)
    assert server_status(server_env, project) is None
    first = run_cuda2hip(["check", "--server", "--no-cache", "src"], server_env, project)
    assert first.returncode == 1 and "HIP101" in first.stdout
    assert wait_until(lambda: server_status(server_env, project) is not None)
    again = run_cuda2hip(["check", "--server", "--no-cache", "src"], server_env, project)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)
    assert checks_served(server_env, project) == 1


def test_the_server_stops_when_idle_or_asked(server_env, tmp_path):
    runtime = Path(server_env["CUDA2HIP_RUNTIME_DIR"])
    assert run_cuda2hip(["server", "start", "--idle-minutes", "0.02"], server_env, tmp_path).returncode == 0
    assert wait_until(lambda: server_status(server_env, tmp_path) is None, 30)
    assert not list(runtime.glob("*.sock"))
    assert "stopping: idle" in next(runtime.glob("*.log")).read_text()
    assert run_cuda2hip(["server", "start"], server_env, tmp_path).returncode == 0
    again = run_cuda2hip(["server", "start"], server_env, tmp_path)
    assert again.returncode == 0 and "runs already" in again.stdout
    stop = run_cuda2hip(["server", "stop"], server_env, tmp_path)
    assert "stopping the server" in stop.stdout
    assert wait_until(lambda: server_status(server_env, tmp_path) is None, 30)
    assert "no server runs" in run_cuda2hip(["server", "stop"], server_env, tmp_path).stdout


def test_the_code_key_follows_the_code_and_the_interpreters_start_up_environment(tmp_path, monkeypatch):
    from cuda2hip import resident

    (tmp_path / "rules").mkdir()
    rule = tmp_path / "rules" / "r.yaml"
    rule.write_text("a")
    monkeypatch.setattr(resident, "package_dirs", lambda: (str(tmp_path),))
    key = resident.code_key()
    monkeypatch.setenv("SOMETHING_ELSE", "1")
    assert resident.code_key() == key  # the check's own environment goes with each request
    rule.write_text("b")
    os.utime(rule, ns=(1, 1))
    changed = resident.code_key()
    assert changed != key
    (tmp_path / "rules" / "new.yaml").write_text("")
    assert resident.code_key() != changed
    changed = resident.code_key()
    for name in ("PYTHONWARNINGS", "LC_ALL", "LANG"):
        monkeypatch.setenv(name, "C")
        assert resident.code_key() != changed
        changed = resident.code_key()


def test_stale_logs_of_other_code_are_removed(tmp_path):
    from cuda2hip.resident.daemon import remove_stale

    old = time.time() - 8 * 86400
    for name in ("server-aaa.log", "server-aaa.lock", "server-bbb.log", "server-bbb.sock", "server-me.log",
                 "notes.log"):
        (tmp_path / name).write_text("")
        os.utime(tmp_path / name, (old, old))
    (tmp_path / "server-ccc.log").write_text("")  # recent
    remove_stale(str(tmp_path), "me")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "notes.log", "server-bbb.log", "server-bbb.sock", "server-ccc.log", "server-me.log"]


def test_check_server_starts_nothing_where_no_server_could_listen(tmp_path, monkeypatch):
    from cuda2hip.resident import client, control

    spawned = []
    monkeypatch.setattr(control, "spawn", lambda *a: spawned.append(a))
    monkeypatch.delenv("CUDA2HIP_NO_SERVER")
    runtime = tmp_path / "runtime"
    monkeypatch.setenv("CUDA2HIP_RUNTIME_DIR", str(runtime))
    assert client.serve(["check", "--server", "a.cu"]) is None and len(spawned) == 1  # none yet: start one
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)
    assert client.serve(["check", "--server", "a.cu"]) is None and len(spawned) == 1  # refused folder
    runtime.chmod(0o700)
    assert client.serve(["check", "a.cu"]) is None and len(spawned) == 1  # not asked to
    assert client.serve(["check", "--server", "a.cu"]) is None and len(spawned) == 2


def test_a_check_reports_its_exit_status_before_its_process_ends(tmp_path):
    """The client gets the status from the check itself, not once the fork is reaped (a fork of
    the server takes milliseconds to tear down, which pre-commit would wait for): here the
    check's process lingers 3 s after its report."""
    from cuda2hip.resident import check_process

    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    out = tmp_path / "out.txt"
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the check's process
        try:
            ours.close()
            real_exit = os._exit

            def lingering_exit(code):
                time.sleep(3)
                real_exit(code)

            os._exit = lingering_exit
            fds = [os.open(os.devnull, os.O_RDONLY), os.open(out, os.O_WRONLY | os.O_CREAT), os.open(os.devnull, os.O_WRONLY)]
            env = {k: v for k, v in os.environ.items()}
            env["CUDA2HIP_NO_SERVER"] = "1"
            check_process.run_check({"argv": ["check", "--no-cache", "--isolated", "--format", "concise", str(src)],
                                     "argv0": "cuda2hip", "cwd": str(tmp_path), "env": env, "umask": 0o022,
                                     "streams": [None, ("utf-8", "strict", False, False), ("utf-8", "strict", False, False)]},
                                    fds, theirs)
        finally:
            os._exit(99)
    theirs.close()
    ours.settimeout(60)
    report = ours.recv(16)
    alive = os.waitpid(pid, os.WNOHANG) == (0, 0)
    _, status = os.waitpid(pid, 0)
    assert report == check_process.STATUS + (1).to_bytes(4, "little", signed=True)  # findings: exit 1
    assert alive, "the status came only when the check's process ended"
    assert os.waitstatus_to_exitcode(status) == 1
    assert "HIP" in out.read_text()  # its output was flushed before the report


def test_the_warm_up_runs_its_checks_in_its_own_folder_wherever_the_server_started(tmp_path, monkeypatch):
    """The warm-up's project check must find its header under the run's root (the working
    directory), as a hook's check in its repository does: run from the folder `server start`
    ran in, the header was no project's and what checks derive from project headers stayed
    unprimed in every fork."""
    from cuda2hip.cli.commands import commands as cli
    from cuda2hip.resident.warm_up import Workspace

    workspace = Workspace(str(tmp_path / "server"))
    elsewhere = tmp_path / "where-server-start-ran"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    seen = []
    monkeypatch.setattr(cli, "main", lambda args: seen.append((os.getcwd(), args[-1])))
    workspace.prime()
    assert seen and all(cwd == workspace.folder for cwd, _ in seen)
    project_file = os.path.join(workspace.project, "kernel.cu")
    assert any(os.path.relpath(path, cwd).startswith("project") for cwd, path in seen if path == project_file)
    assert os.getcwd() == str(elsewhere)
