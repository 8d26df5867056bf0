"""jobs/setup's output: one line per step and host, and a summary file.

A task with the variable `step` speaks: a `debug` task prints its msg, a
command, shell or script task the last line of its output; any other task
speaks only when it fails. A failure prints 'FAILED:' with the module's
message (or the last line of its error output). The counts per host go to
the JSON file named by WB_SETUP_SUMMARY.
"""
import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: wulfbench_steps
    type: stdout
    short_description: one line per step and host for jobs/setup
    description: one line per step and host; counts per host in WB_SETUP_SUMMARY
"""

SPEAKS = {"command", "shell", "script", "ansible.builtin.command", "ansible.builtin.shell", "ansible.builtin.script"}


def last_line(text):
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "wulfbench_steps"

    _task = None
    _t0 = 0.0

    def _profile(self, name=None):
        # WB_SETUP_PROFILE=1: each task's wall time, for tuning.
        if os.environ.get("WB_SETUP_PROFILE") and self._task is not None:
            self._display.display("  [%.1f s] %s" % (time.time() - self._t0, self._task))
        self._task, self._t0 = name, time.time()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._profile(task.get_name())

    def _say(self, result, text):
        host = result._host.get_name()
        step = result._task.vars.get("step") or result._task.get_name()
        self._display.display("%-10s %-9s %s" % (host, step, text))

    def v2_runner_on_ok(self, result):
        task = result._task
        if not task.vars.get("step"):
            return
        r = result._result
        if task.action in ("debug", "ansible.builtin.debug"):
            self._say(result, str(r.get("msg", "")))
        elif task.action in SPEAKS:
            self._say(result, last_line(r.get("stdout")) or "done")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if ignore_errors:
            return
        r = result._result
        msg = r.get("msg", "")
        if r.get("stderr") or r.get("stdout"):
            msg = last_line(r.get("stderr")) or last_line(r.get("stdout")) or msg
        self._say(result, "FAILED: " + " ".join(str(msg).split()))

    def v2_runner_on_unreachable(self, result):
        self._say(result, "FAILED: unreachable: " + " ".join(str(result._result.get("msg", "")).split()))

    def v2_playbook_on_stats(self, stats):
        self._profile()
        out = {h: stats.summarize(h) for h in sorted(stats.processed)}
        path = os.environ.get("WB_SETUP_SUMMARY")
        if path:
            with open(path, "w") as f:
                json.dump(out, f)
