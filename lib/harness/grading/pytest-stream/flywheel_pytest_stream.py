# Flywheel's isolated pytest launcher and result stream (see ../pytest-stream.ts for the design and its limits).
#
# Run as `python -I -c "<this file>" <m|s> <junit-path> [pytest args...]` with the per-run nonce as the first line of
# stdin. `-I` keeps the workspace off sys.path while pytest and its internals are imported, so a `pytest.py`,
# `_pytest/`, `pluggy.py`, `sitecustomize.py` or `.pth` in the repository cannot stand in for the runner; the
# workspace (`m`: like `python -m pytest`) and PYTHONPATH go on sys.path only afterwards.
#
# Every test phase report is written, as the phase finishes, to a duplicate of stderr taken before pytest captures
# anything: one line `@@flywheel-stream <nonce> <json>`. Lines already in the pipe cannot be taken back, so an
# exit hook or a background process can only append. The plugin also watches pytest's machinery and says so
# (`tamper` lines) when the code under test patches it, registers exit hooks, or rewrites the JUnit report.


def _fw_main():
    # Everything lives in this function's scope, not in __main__'s globals, so `import __main__` finds nothing to rebind.
    import atexit as _fw_atexit
    import hashlib as _fw_hashlib
    import json as _fw_json
    import os as _fw_os
    import sys as _fw_sys
    import time as _fw_time

    _fw_fd = _fw_os.dup(2)
    _fw_nonce = _fw_sys.stdin.readline().strip()
    _fw_devnull = _fw_os.open(_fw_os.devnull, _fw_os.O_RDONLY)
    _fw_os.dup2(_fw_devnull, 0)
    _fw_os.close(_fw_devnull)
    _fw_sys.stdin = open(_fw_os.devnull)
    _fw_write = _fw_os.write


    def _fw_emit(obj):
        data = ('\n@@flywheel-stream ' + _fw_nonce + ' ' + _fw_json.dumps(obj, separators=(',', ':'), default=str) + '\n').encode('utf-8', 'replace')
        while data:
            try:
                n = _fw_write(_fw_fd, data)
            except InterruptedError:
                continue
            data = data[n:]


    _fw_mode = _fw_sys.argv[1] if len(_fw_sys.argv) > 1 else 'm'
    _fw_junit = _fw_sys.argv[2] if len(_fw_sys.argv) > 2 else ''
    _fw_args = _fw_sys.argv[3:]
    _fw_cwd = _fw_os.getcwd()
    _fw_sys.dont_write_bytecode = True

    import pytest  # noqa: E402  (the environment's: the workspace is not on sys.path yet)
    import pluggy  # noqa: E402
    import _pytest.config  # noqa: E402
    import _pytest.junitxml  # noqa: E402
    import _pytest.main  # noqa: E402
    import _pytest.outcomes  # noqa: E402
    import _pytest.python  # noqa: E402
    import _pytest.reports  # noqa: E402
    import _pytest.runner  # noqa: E402
    import _pytest.skipping  # noqa: E402
    import _pytest.terminal  # noqa: E402
    import pluggy._callers  # noqa: E402
    import pluggy._hooks  # noqa: E402
    import pluggy._manager  # noqa: E402


    def _fw_inside(path, root):
        try:
            path = _fw_os.path.realpath(path)
            root = _fw_os.path.realpath(root)
        except Exception:
            return False
        return path == root or path.startswith(root.rstrip('/') + '/')


    # A runner in a read-only place (an environment bound into the workspace) is not one the code could have planted.
    _fw_runner_writable = _fw_os.access(_fw_os.path.dirname(pytest.__file__), _fw_os.W_OK)
    _fw_emit({'t': 'header', 'pytest': pytest.__file__, 'writable': _fw_runner_writable, 'version': pytest.__version__, 'python': _fw_sys.executable, 'cwd': _fw_cwd, 'mode': _fw_mode, 'junit': _fw_junit})
    if _fw_inside(pytest.__file__, _fw_cwd) and _fw_runner_writable:
        _fw_emit({'t': 'tamper', 'what': 'pytest-shadowed', 'detail': pytest.__file__})

    # The workspace goes on sys.path only now, as `python -m pytest` would have put it (and PYTHONPATH, which -I ignores).
    _fw_extra = [p for p in _fw_os.environ.get('PYTHONPATH', '').split(_fw_os.pathsep) if p]
    _fw_sys.path[0:0] = ([_fw_cwd] if _fw_mode == 'm' else []) + [_fw_os.path.abspath(p) for p in _fw_extra]


    def _fw_attr(owner, name):
        d = getattr(owner, '__dict__', None)
        if isinstance(d, dict) or hasattr(d, 'get'):
            try:
                return d.get(name)
            except Exception:
                pass
        return getattr(owner, name, None)


    _R = _pytest.reports
    _RU = _pytest.runner
    _P = _pytest.python
    _T = _pytest.terminal
    _J = _pytest.junitxml
    _M = _pytest.main
    _S = _pytest.skipping
    _O = _pytest.outcomes

    # What the verdict depends on. Compared by identity before each report is written and at the end.
    _FW_WATCHED = [
        ('TestReport.from_item_and_call', _R.TestReport, 'from_item_and_call'),
        ('TestReport.__init__', _R.TestReport, '__init__'),
        ('BaseReport.passed', _R.BaseReport, 'passed'),
        ('BaseReport.failed', _R.BaseReport, 'failed'),
        ('BaseReport.skipped', _R.BaseReport, 'skipped'),
        ('reports.TestReport', _R, 'TestReport'),
        ('CallInfo.from_call', _RU.CallInfo, 'from_call'),
        ('runner.call_and_report', _RU, 'call_and_report'),
        ('runner.runtestprotocol', _RU, 'runtestprotocol'),
        ('runner.pytest_runtest_makereport', _RU, 'pytest_runtest_makereport'),
        ('runner.pytest_runtest_protocol', _RU, 'pytest_runtest_protocol'),
        ('runner.pytest_runtest_call', _RU, 'pytest_runtest_call'),
        ('runner.check_interactive_exception', _RU, 'check_interactive_exception'),
        ('python.pytest_pyfunc_call', _P, 'pytest_pyfunc_call'),
        ('Function.runtest', _P.Function, 'runtest'),
        ('skipping.pytest_runtest_makereport', _S, 'pytest_runtest_makereport'),
        ('skipping.pytest_report_teststatus', _S, 'pytest_report_teststatus'),
        ('TerminalReporter.pytest_runtest_logreport', _T.TerminalReporter, 'pytest_runtest_logreport'),
        ('TerminalReporter.summary_stats', _T.TerminalReporter, 'summary_stats'),
        ('TerminalReporter.build_summary_stats_line', _T.TerminalReporter, 'build_summary_stats_line'),
        ('LogXML.pytest_runtest_logreport', _J.LogXML, 'pytest_runtest_logreport'),
        ('LogXML.pytest_sessionfinish', _J.LogXML, 'pytest_sessionfinish'),
        ('main.pytest_runtestloop', _M, 'pytest_runtestloop'),
        ('outcomes.fail', _O, 'fail'),
        ('outcomes.skip', _O, 'skip'),
        ('outcomes.exit', _O, 'exit'),
        ('HookCaller.__call__', pluggy._hooks.HookCaller, '__call__'),
        ('PluginManager._hookexec', pluggy._manager.PluginManager, '_hookexec'),
        ('callers._multicall', pluggy._callers, '_multicall'),
        ('sys.exit', _fw_sys, 'exit'),
        ('os._exit', _fw_os, '_exit'),
        ('os.write', _fw_os, 'write'),
    ]
    _fw_snapshot = {name: _fw_attr(owner, attr) for name, owner, attr in _FW_WATCHED}
    _fw_modules = {name: _fw_sys.modules.get(name) for name in ('pytest', '_pytest', '_pytest.reports', '_pytest.runner', '_pytest.junitxml', '_pytest.terminal', 'pluggy', 'atexit')}
    _fw_told = set()


    def _fw_tamper(what, detail=''):
        if what in _fw_told:
            return
        _fw_told.add(what)
        _fw_emit({'t': 'tamper', 'what': what, 'detail': str(detail)[:500]})


    def _fw_note(what, detail=''):
        # Worth a look, not proof of tampering (a repository may register exit hooks of its own).
        if what in _fw_told:
            return
        _fw_told.add(what)
        _fw_emit({'t': 'note', 'what': what, 'detail': str(detail)[:500]})


    # Where the environment's own code lives (interpreter prefixes, site-packages), taken before the workspace is on
    # sys.path.
    import sysconfig as _fw_sysconfig
    _fw_env_roots = [p for p in {_fw_sys.prefix, _fw_sys.base_prefix, _fw_sys.exec_prefix, *(_fw_sysconfig.get_paths().get(k, '') for k in ('stdlib', 'platstdlib', 'purelib', 'platlib'))} if p and not _fw_inside(_fw_cwd, p) and not _fw_inside(p, _fw_cwd)]

    def _fw_check(where):
        for name, owner, attr in _FW_WATCHED:
            now = _fw_attr(owner, attr)
            if now is _fw_snapshot[name]:
                continue
            # A plugin of the environment (site-packages) that wraps one of these is not the code under test: noted.
            # Anything written in the workspace, or of unknown origin, is tampering.
            src = _fw_code_file(now)
            if src and not _fw_inside(src, _fw_cwd) and any(_fw_inside(src, root) for root in _fw_env_roots):
                _fw_note('patched-by-environment:' + name, src)
            else:
                _fw_tamper('patched:' + name, where)
        for name, mod in _fw_modules.items():
            if _fw_sys.modules.get(name) is not mod:
                _fw_tamper('replaced-module:' + name, where)


    # Exit hooks: every registration whose callable was written in the workspace is reported (the stdlib's own, such
    # as weakref.finalize's, are not). Ours is registered first, so it runs last, after any the code registered.
    _fw_real_register = _fw_atexit.register


    def _fw_code_file(fn):
        for f in (fn, getattr(fn, 'func', None), getattr(fn, '__func__', None), getattr(fn, 'fget', None), getattr(fn, '__call__', None)):
            code = getattr(f, '__code__', None) or getattr(getattr(f, '__func__', None), '__code__', None)
            if code is not None:
                return code.co_filename
        return getattr(_fw_sys.modules.get(getattr(fn, '__module__', '') or ''), '__file__', None)


    def _fw_register(fn, *args, **kwargs):
        src = _fw_code_file(fn)
        if src and _fw_inside(src, _fw_cwd):
            _fw_note('exit-hook:' + _fw_os.path.relpath(_fw_os.path.realpath(src), _fw_os.path.realpath(_fw_cwd)), getattr(fn, '__qualname__', repr(fn)))
        return _fw_real_register(fn, *args, **kwargs)


    _fw_atexit.register = _fw_register
    _fw_snapshot['atexit.register'] = _fw_register
    _FW_WATCHED.append(('atexit.register', _fw_atexit, 'register'))

    _fw_junit_digest = {'at-end': None}


    def _fw_digest(path):
        try:
            with open(path, 'rb') as f:
                return _fw_hashlib.sha256(f.read()).hexdigest()
        except OSError:
            return None


    def _fw_at_exit():
        _fw_check('exit')
        if _fw_junit and _fw_junit_digest['at-end'] is not None and _fw_digest(_fw_junit) != _fw_junit_digest['at-end']:
            _fw_tamper('junit-rewritten-after-session', _fw_junit)
        _fw_emit({'t': 'exit'})


    _fw_real_register(_fw_at_exit)


    class _FlywheelStream:
        def __init__(self):
            self.raw = {}
            self.counts = {}

        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_runtest_makereport(self, item, call):
            # The outcome from the raw exception, before any report object is built: a report that says `passed` for a
            # phase that raised (other than a skip) was rewritten.
            raw = None
            if call.excinfo is None:
                raw = 'passed'
            elif call.excinfo.errisinstance(_O.Skipped):
                raw = 'skipped'
            else:
                raw = 'failed'
            yield
            self.raw[(item.nodeid, call.when)] = raw

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(self, report):
            _fw_check(report.nodeid)
            raw = self.raw.pop((report.nodeid, report.when), None)
            line = {'t': 'r', 'id': report.nodeid, 'when': report.when, 'outcome': report.outcome, 'raw': raw, 'dur': round(getattr(report, 'duration', 0.0) or 0.0, 6)}
            if hasattr(report, 'wasxfail'):
                line['xfail'] = True
            _fw_emit(line)
            if raw is not None and raw != 'passed' and report.outcome == 'passed':
                _fw_tamper('outcome-rewritten:' + report.nodeid, report.when)

        @pytest.hookimpl(tryfirst=True)
        def pytest_collectreport(self, report):
            if report.failed:
                _fw_emit({'t': 'collect-error', 'id': report.nodeid})

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session, exitstatus):
            _fw_check('sessionfinish')
            foreign = []
            for plugin in session.config.pluginmanager.get_plugins():
                f = getattr(plugin, '__file__', None)
                if f and _fw_inside(f, _fw_cwd) and _fw_os.path.basename(f) != 'conftest.py':
                    foreign.append(_fw_os.path.relpath(f, _fw_cwd))
            for f in foreign:
                _fw_note('workspace-plugin:' + f)
            if _fw_junit:
                _fw_junit_digest['at-end'] = _fw_digest(_fw_junit)
            _fw_emit({'t': 'end', 'exitstatus': int(exitstatus), 'junitSha256': _fw_junit_digest['at-end']})


    # First, so it comes after PYTEST_ADDOPTS (which pytest puts before the arguments) and before any `--`.
    _fw_argv = (['--junitxml=' + _fw_junit] if _fw_junit else []) + list(_fw_args)
    _fw_rc = pytest.main(_fw_argv, plugins=[_FlywheelStream()])
    _fw_sys.stdout.flush()
    _fw_sys.exit(int(_fw_rc))



_fw_main()
