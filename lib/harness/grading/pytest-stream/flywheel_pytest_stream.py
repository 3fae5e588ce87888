# Flywheel's isolated pytest launcher and result stream (see ../pytest-stream.ts for the design and its limits).
#
# Run as `python -I -c "<this file>" <m|s> [pytest args...]` with the per-run nonce as the first line of stdin and the
# JUnit path as the second (never in argv or the environment, where the code under test could read it). `-I` keeps
# the workspace off sys.path while pytest and its internals are imported, so a `pytest.py`, `_pytest/`, `pluggy.py`,
# `sitecustomize.py` or `.pth` in the repository cannot stand in for the runner; an audit hook (the guard, below) is
# installed next, and the workspace (`m`: like `python -m pytest`) and PYTHONPATH go on sys.path only after it.
#
# Every test phase report is written, as the phase finishes, to a duplicate of stderr taken before pytest captures
# anything: one line `@@flywheel-stream <nonce> <json>`. Lines already in the pipe cannot be taken back, so an
# exit hook or a background process can only append. The plugin also watches pytest's machinery and says so
# (`tamper` lines) when the code under test patches it, registers exit hooks, or rewrites the JUnit report; the guard
# reports frame walks, object-graph walks, raw memory and /proc access by the code under test as they happen.


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
    _fw_junit = _fw_sys.stdin.readline().strip()
    _fw_devnull = _fw_os.open(_fw_os.devnull, _fw_os.O_RDONLY)
    _fw_os.dup2(_fw_devnull, 0)
    _fw_os.close(_fw_devnull)
    _fw_sys.stdin = open(_fw_os.devnull)
    _fw_write = _fw_os.write


    from _json import encode_basestring_ascii as _fw_enc

    # The stream's own JSON writer, from builtins and a C function captured now: patching `json` (or a builtin)
    # later changes nothing in what is written.
    def _fw_dump(v, _type=type, _str=str, _repr=repr, _enc=_fw_enc, _join=','.join):
        t = _type(v)
        if v is None:
            return 'null'
        if t is bool:
            return 'true' if v else 'false'
        if t is int or t is float:
            return _repr(v)
        if t is dict:
            return '{' + _join([_enc(_str(k)) + ':' + _fw_dump(x) for k, x in v.items()]) + '}'
        return _enc(v if t is str else _str(v))


    def _fw_emit(obj):
        data = ('\n@@flywheel-stream ' + _fw_nonce + ' ' + _fw_dump(obj) + '\n').encode('utf-8', 'replace')
        while data:
            try:
                n = _fw_write(_fw_fd, data)
            except InterruptedError:
                continue
            data = data[n:]


    _fw_mode = _fw_sys.argv[1] if len(_fw_sys.argv) > 1 else 'm'
    _fw_args = _fw_sys.argv[2:]
    _fw_sys.argv[1:] = list(_fw_args)
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

    _fw_env_roots = _fw_env_roots + [p for p in [*_fw_sys.path, *_fw_os.environ.get('PYTHONPATH', '').split(_fw_os.pathsep)] if p and _fw_os.path.isabs(p) and not _fw_inside(_fw_cwd, p) and not _fw_inside(p, _fw_cwd)]
    _fw_stdlib_roots = [p for p in {_fw_sysconfig.get_paths().get(k, '') for k in ('stdlib', 'platstdlib')} if p and not _fw_inside(_fw_cwd, p) and not _fw_inside(p, _fw_cwd)]
    _fw_audit = _fw_sys.audit

    def _fw_check(where):
        # The comparison runs inside the audit hook (below), against the baseline only the hook holds.
        _fw_audit('flywheel.check', str(where))


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


    def _fw_make_guard(emit_line, watched, protect, launcher_code, cwd, env_roots, stdlib_roots, getframe, inside, code_file, attr, modules):
        # The audit hook. Python code cannot remove an audit hook, and this one is referenced by nothing but the
        # interpreter's hook list once `_fw_main` drops it: the baseline lives only in this closure (built here, in a
        # frame that has returned), as tuples; the code under test can reach it only through the garbage collector or
        # raw memory, and asking for either is reported as it happens. Tamper lines are written the moment the event
        # fires, so nothing the code does afterwards can take them back.
        baseline = tuple((name, owner, a, attr(owner, a)) for name, owner, a in watched)
        mods = tuple((name, modules.get(name)) for name in ('pytest', '_pytest', '_pytest.reports', '_pytest.runner', '_pytest.python', '_pytest.junitxml', '_pytest.terminal', '_pytest.main', 'pluggy', 'atexit'))
        cells = []
        for fn in protect:
            for cell in (getattr(fn, '__closure__', None) or ()):
                try:
                    cells.append((getattr(fn, '__qualname__', '?'), cell, cell.cell_contents))
                except ValueError:
                    pass
        cells = tuple(cells)
        codes = []
        todo = [launcher_code]
        while todo:
            c = todo.pop()
            codes.append(c)
            todo.extend(k for k in c.co_consts if hasattr(k, 'co_code'))
        code_ids = frozenset(id(c) for c in codes)
        codes = tuple(codes)
        told = set()
        busy = [False]
        runner_prefixes = ('_pytest', 'pytest', 'pluggy')
        frame_attrs = frozenset(('tb_frame', 'gi_frame', 'cr_frame', 'ag_frame'))
        gc_events = frozenset(('gc.get_objects', 'gc.get_referrers', 'gc.get_referents'))
        ctypes_memory = frozenset(('ctypes.cdata', 'ctypes.string_at', 'ctypes.wstring_at', 'ctypes.cdata/buffer'))
        proc_prefixes = ('/proc/self/mem', '/proc/self/fd', '/proc/self/fdinfo', '/proc/self/task', '/proc/thread-self', '/dev/fd/')

        def tell(kind, what, detail='', file='', soft=True):
            key = (kind, what, file)
            if key in told:
                return
            told.add(key)
            line = {'t': kind, 'what': what, 'detail': str(detail)[:500]}
            if file:
                line['file'] = file
                # Located lines are judged by the grader: from a file of the base tree the diff did not touch (the
                # repository's own tests or code: memory-leak tests walk gc, libraries read frames) they are notes.
                if soft:
                    line['soft'] = True
            emit_line(line)

        def place(frame):
            # ('self' | 'env' | 'workspace' | 'other', repository-relative path or file name)
            if frame is None:
                return ('other', '')
            code = frame.f_code
            if id(code) in code_ids:
                return ('self', '')
            f = code.co_filename or ''
            if f.startswith('<frozen '):
                return ('env', f)
            if inside(f, cwd):
                try:
                    return ('workspace', _fw_os.path.relpath(_fw_os.path.realpath(f), _fw_os.path.realpath(cwd)))
                except Exception:
                    return ('workspace', f)
            if any(inside(f, r) for r in env_roots):
                return ('env', f)
            return ('other', f)

        def is_stdlib(frame):
            f = frame.f_code.co_filename or ''
            return f.startswith('<frozen ') or (any(inside(f, r) for r in stdlib_roots) and 'site-packages' not in f and 'dist-packages' not in f)

        def first_outside_stdlib(frame):
            n = 0
            while frame is not None and n < 50 and is_stdlib(frame):
                frame = frame.f_back
                n += 1
            return frame

        def suspect(frame):
            where = place(frame)
            return where if where[0] in ('workspace', 'other') else None

        def check(where):
            for name, owner, a, was in baseline:
                now = attr(owner, a)
                if now is was:
                    continue
                # A plugin of the environment (site-packages) that wraps one of these is not the code under test:
                # noted. Anything written in the workspace, or of unknown origin, is tampering.
                src = code_file(now)
                if src and not inside(src, cwd) and any(inside(src, r) for r in env_roots):
                    tell('note', 'patched-by-environment:' + name, src)
                else:
                    tell('tamper', 'patched:' + name, where)
            for name, mod in mods:
                if modules.get(name) is not mod:
                    tell('tamper', 'replaced-module:' + name, where)
            for owner, cell, content in cells:
                try:
                    same = cell.cell_contents is content
                except ValueError:
                    same = False
                if not same:
                    tell('tamper', 'rebound-launcher-state:' + owner, where)

        def runner_object(obj):
            mod = getattr(obj, '__module__', None)
            if isinstance(mod, str) and (mod in runner_prefixes or mod.startswith(tuple(p + '.' for p in runner_prefixes))):
                return True
            code = getattr(obj, '__code__', None)
            return code is not None and id(code) in code_ids

        def handle(event, args):
            if event == 'flywheel.check':
                check(args[0] if args else '')
                return
            if event == 'cpython._PySys_ClearAuditHooks':
                check('finalize')
                return
            # Frame 0 is this function, 1 the hook, 2 the Python code that raised the event.
            caller = getframe(2)
            if event in ('sys._getframe', 'sys._current_frames'):
                c = caller
                # Frame helpers of the stdlib hand the frame to their caller: judge the caller.
                while c is not None and is_stdlib(c) and (c.f_code.co_name in ('currentframe', 'stack', 'getouterframes', 'trace', 'walk_stack', 'walk_tb')):
                    c = c.f_back
                who = suspect(c)
                if who:
                    tell('tamper', 'frame-access:' + event, 'code under test reached for interpreter frames', who[1])
                return
            if event == 'object.__getattr__':
                if len(args) > 1 and args[1] in frame_attrs:
                    who = suspect(caller)
                    if who:
                        tell('tamper', 'frame-access:' + str(args[1]), 'code under test reached for interpreter frames', who[1])
                return
            if event == 'object.__setattr__':
                if args and runner_object(args[0]):
                    who = suspect(first_outside_stdlib(caller))
                    if who:
                        tell('tamper', 'patched-code:' + getattr(args[0], '__qualname__', '?') + '.' + str(args[1] if len(args) > 1 else '?'), 'code under test rewrote the runner', who[1])
                return
            if event in ('sys.settrace', 'sys.setprofile'):
                who = suspect(first_outside_stdlib(caller))
                if who:
                    tell('tamper', 'tracing:' + event, 'code under test installed a trace or profile function', who[1])
                return
            if event in gc_events:
                who = suspect(first_outside_stdlib(caller))
                if who:
                    tell('tamper', 'gc-walk:' + event, 'code under test listed live objects', who[1])
                return
            if event.startswith('ctypes.'):
                hit = event in ctypes_memory
                if event == 'ctypes.dlsym' and len(args) > 1 and isinstance(args[1], str) and (args[1].startswith('Py') or args[1].startswith('_Py')):
                    hit = True
                if event == 'ctypes.call_function' and args:
                    ct = modules.get('_ctypes')
                    hit = ct is not None and args[0] in (getattr(ct, '_memmove_addr', None), getattr(ct, '_memset_addr', None), getattr(ct, '_string_at_addr', None))
                if hit:
                    who = suspect(first_outside_stdlib(caller))
                    if who:
                        tell('tamper', 'raw-memory:' + event, 'code under test reached for raw memory', who[1])
                return
            if event == 'open' and args and isinstance(args[0], (str, bytes)):
                path = args[0].decode('utf-8', 'replace') if isinstance(args[0], bytes) else args[0]
                if path.startswith('/proc/') or path.startswith('/dev/fd/'):
                    parts = path.split('/')
                    own = len(parts) > 3 and (parts[2] in ('self', 'thread-self', str(_fw_os.getpid())))
                    if path.startswith('/dev/fd/') or (own and parts[3] in ('mem', 'fd', 'fdinfo', 'task', 'map_files')) or (len(parts) > 3 and parts[3] == 'mem'):
                        who = suspect(first_outside_stdlib(caller))
                        if who:
                            tell('tamper', 'proc-access:' + '/'.join(parts[:4]), path, who[1])
                return

        def hook(event, args):
            if busy[0]:
                return
            busy[0] = True
            try:
                handle(event, args)
            except BaseException:
                pass
            finally:
                busy[0] = False

        return hook


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


    _fw_plugin = _FlywheelStream()
    _fw_protect = [_fw_emit, _fw_dump, _fw_tamper, _fw_note, _fw_check, _fw_register, _fw_at_exit, _fw_digest, _fw_code_file] + [
        f for f in vars(_FlywheelStream).values() if hasattr(f, '__code__')
    ]
    _fw_hook = _fw_make_guard(_fw_emit, tuple(_FW_WATCHED), _fw_protect, _fw_sys._getframe(0).f_code, _fw_cwd, tuple(_fw_env_roots), tuple(_fw_stdlib_roots), _fw_sys._getframe, _fw_inside, _fw_code_file, _fw_attr, _fw_sys.modules)
    _fw_sys.addaudithook(_fw_hook)
    del _fw_hook, _fw_protect

    # The workspace goes on sys.path only now, after the guard, as `python -m pytest` would have put it (and
    # PYTHONPATH, which -I ignores).
    _fw_extra = [p for p in _fw_os.environ.get('PYTHONPATH', '').split(_fw_os.pathsep) if p]
    _fw_sys.path[0:0] = ([_fw_cwd] if _fw_mode == 'm' else []) + [_fw_os.path.abspath(p) for p in _fw_extra]

    # First, so it comes after PYTEST_ADDOPTS (which pytest puts before the arguments) and before any `--`.
    _fw_argv = (['--junitxml=' + _fw_junit] if _fw_junit else []) + list(_fw_args)
    _fw_rc = pytest.main(_fw_argv, plugins=[_fw_plugin])
    _fw_sys.stdout.flush()
    _fw_sys.exit(int(_fw_rc))



_fw_main()
