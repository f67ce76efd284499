"""The structure gate's `ir` command for every job of examples/gpu: PTX of one side's kernel.

    python3 dump_ir.py --bench BENCH.py --config ID --call FN --kernel GLOB
                       [--side reference|candidate] [--workspace DIR]
                       [--format ptx|ttir|ttgir] [--out FILE]

Runs the operator once, on the inputs the bench draws for config ID (the same
on both sides), and writes the IR of the kernel named GLOB that this call
compiled to --out (default $KPORT_IR_OUT, which kport sets). The side is
--side, else KPORT_IMPL / KPORT_SIDE, as the op's own Selector reads them.

- reference (Triton): the kernel is compiled into a fresh TRITON_CACHE_DIR,
  whose <hash>/<kernel>.<format> file is the IR Triton itself produced (the
  same text CompiledKernel.asm[format] holds). PTX by default; TTIR and TTGIR
  for a Triton-to-Triton comparison.
- candidate (CUDA C++ through CuPy): cupy.RawModule is wrapped before the
  port is imported, so every module the call builds is recorded with its
  source and options (the -D defines of the configuration that ran); the
  source is then compiled to PTX by NVRTC, the compiler CuPy itself uses, for
  the device's compute capability (nvcc --ptx when libnvrtc is not found).

Only the module whose .entry matches GLOB is written, so the file holds one
kernel and the comparator pairs it with the reference's single kernel. Exit
status 0 when written; 2 for usage errors; 1 when the call compiled no
matching kernel (the message lists what it did compile).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import fnmatch
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import types

# Before anything imports Triton: its cache directory is read from here.
_TRITON_CACHE = tempfile.mkdtemp(prefix="kport-ir-triton-")
os.environ["TRITON_CACHE_DIR"] = _TRITON_CACHE

_ENTRY = re.compile(r"^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+([A-Za-z_$][\w$]*)", re.MULTILINE)


class DumpError(Exception):
    """What went wrong, in words a user can act on."""


def ptx_entries(ptx: str) -> list[str]:
    """The kernel (.entry) names of a PTX text."""
    return _ENTRY.findall(ptx)


def compile_options(options) -> list[str]:
    """The options of a recorded RawModule that shape the code: defines,
    include paths, the language standard and fast-math switches."""
    keep = ("-D", "--define-macro", "-I", "--include-path", "-std", "--std",
            "--use_fast_math", "-use_fast_math", "--fmad", "-fmad")
    return [str(o) for o in options if str(o).startswith(keep)]


def _load_nvrtc():
    names = ["nvrtc", "nvrtc.so.13", "nvrtc.so.12"]
    candidates = [ctypes.util.find_library(n) for n in names]
    candidates += [f"libnvrtc.so.{v}" for v in (13, 12)] + ["libnvrtc.so"]
    cuda = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    candidates += sorted(str(p) for p in (cuda / "lib64").glob("libnvrtc.so*"))
    for name in candidates:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def nvrtc_ptx(source: str, options: list[str], arch: str) -> str:
    """PTX of `source` by NVRTC with `options` for `arch` (compute_90)."""
    lib = _load_nvrtc()
    if lib is None:
        return nvcc_ptx(source, options, arch)
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kport_port.cu", 0,
                              None, None):
        raise DumpError("nvrtcCreateProgram failed")
    try:
        opts = [f"-arch={arch}", *options]
        argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        status = lib.nvrtcCompileProgram(prog, len(opts), argv)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        if status:
            raise DumpError(f"NVRTC could not compile the recorded module ({' '.join(opts)}):\n"
                            + log.value.decode(errors="replace"))
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        return ptx.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def nvcc_ptx(source: str, options: list[str], arch: str) -> str:
    """PTX of `source` by nvcc --ptx, for machines without libnvrtc."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    with tempfile.TemporaryDirectory(prefix="kport-ir-nvcc-") as tmp:
        src = pathlib.Path(tmp, "port.cu")
        src.write_text(source)
        out = pathlib.Path(tmp, "port.ptx")
        argv = [nvcc, f"-arch={arch}", "--ptx", *options, str(src), "-o", str(out)]
        ran = subprocess.run(argv, capture_output=True, text=True)
        if ran.returncode:
            raise DumpError(f"nvcc failed ({' '.join(argv)}):\n{ran.stderr}")
        return out.read_text()


def pick_triton_file(cache_dir: str, kernel_glob: str, fmt: str) -> pathlib.Path:
    """The one <kernel>.<fmt> Triton wrote under cache_dir for a kernel matching the glob."""
    found = sorted(p for p in pathlib.Path(cache_dir).rglob(f"*.{fmt}")
                   if fnmatch.fnmatchcase(p.stem, kernel_glob))
    if not found:
        seen = sorted({p.name for p in pathlib.Path(cache_dir).rglob("*") if p.is_file()})
        raise DumpError(f"Triton compiled no kernel matching `{kernel_glob}` into "
                        f"{cache_dir} (files: {', '.join(seen) or 'none'})")
    if len(found) > 1:
        raise DumpError(f"the call compiled {len(found)} kernels matching `{kernel_glob}` "
                        f"({', '.join(str(p) for p in found)}): pick a config that compiles one")
    return found[0]


class ModuleRecorder:
    """Wraps cupy.RawModule so that each module built is remembered (source,
    options); the wrapped constructor still returns the real module."""

    def __init__(self, cupy_module) -> None:
        self.cupy = cupy_module
        self.real = cupy_module.RawModule
        self.modules: list[tuple[str, tuple[str, ...]]] = []

    def __enter__(self) -> "ModuleRecorder":
        real, modules = self.real, self.modules

        def recording_raw_module(*args, **kwargs):
            code = kwargs.get("code", args[0] if args else None)
            path = kwargs.get("path")
            if code is None and path and str(path).endswith(".ptx"):
                code = "// PTX: " + pathlib.Path(path).read_text()
            if code is not None:
                modules.append((code, tuple(kwargs.get("options", ()))))
            return real(*args, **kwargs)

        self.cupy.RawModule = recording_raw_module
        return self

    def __exit__(self, *exc) -> None:
        self.cupy.RawModule = self.real


def _import_path(path: pathlib.Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DumpError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _selector_module(bench: types.ModuleType) -> types.ModuleType:
    found = [v for v in vars(bench).values()
             if isinstance(v, types.ModuleType) and hasattr(v, "selector")]
    if len(found) != 1:
        raise DumpError(f"{bench.__file__}: expected one <op>_select module among its "
                        f"imports, found {len(found)}")
    return found[0]


def _run_once(bench, impl, config_id: str, call: str) -> None:
    import torch

    configs = {c.id: c for c in bench.CONFIGS}
    if config_id not in configs:
        raise DumpError(f"no config `{config_id}` in {bench.__file__} "
                        f"(have {', '.join(configs)})")
    config = configs[config_id]
    generator = torch.Generator(device="cuda")
    generator.manual_seed(config.seed)
    inputs = bench.make_inputs(config, generator)
    getattr(impl, call)(*inputs)
    torch.cuda.synchronize()


def dump(args) -> str:
    """The IR text of the selected side's kernel."""
    bench = _import_path(pathlib.Path(args.bench).resolve(), "_kport_ir_bench")
    select = _selector_module(bench)
    side = select.selected_impl(args.side)
    if side == "reference":
        impl = select.load(side, args.workspace)
        _run_once(bench, impl, args.config, args.call)
        return pick_triton_file(_TRITON_CACHE, args.kernel, args.format).read_text()
    if args.format != "ptx":
        raise DumpError("the candidate side dumps PTX only")
    import cupy
    import torch

    with ModuleRecorder(cupy) as recorder:
        impl = select.load(side, args.workspace)
        _run_once(bench, impl, args.config, args.call)
    major, minor = torch.cuda.get_device_capability()
    arch = f"compute_{major}{minor}"
    matching: dict[str, str] = {}
    compiled: list[str] = []
    for code, options in dict.fromkeys(recorder.modules):
        ptx = (code.removeprefix("// PTX: ") if code.startswith("// PTX: ")
               else nvrtc_ptx(code, compile_options(options), arch))
        entries = ptx_entries(ptx)
        compiled += entries
        if any(fnmatch.fnmatchcase(e, args.kernel) for e in entries):
            if len(entries) > 1:
                raise DumpError(f"the module of `{args.kernel}` has {len(entries)} kernels "
                                f"({', '.join(entries)}): the comparator needs one")
            matching[ptx] = " ".join(options)
    if len(matching) != 1:
        raise DumpError(f"the call built {len(matching)} modules with a kernel matching "
                        f"`{args.kernel}` (kernels compiled: {', '.join(compiled) or 'none'})")
    ptx, options = next(iter(matching.items()))
    return f"// kport dump_ir: NVRTC {arch} {options}\n" + ptx


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True, help="the op's bench script (its CONFIGS "
                        "and make_inputs give the call's inputs)")
    parser.add_argument("--config", required=True, help="the bench config to run once")
    parser.add_argument("--call", required=True, help="the function of the op's module to call")
    parser.add_argument("--kernel", required=True, help="glob of the kernel to dump")
    parser.add_argument("--side", choices=("reference", "candidate"),
                        help="default: KPORT_IMPL, else KPORT_SIDE, else reference")
    parser.add_argument("--workspace", help="the candidate's folder (default "
                        "$KPORT_WORKSPACE, else the current folder)")
    parser.add_argument("--format", choices=("ptx", "ttir", "ttgir"), default="ptx")
    parser.add_argument("--out", default=os.environ.get("KPORT_IR_OUT"),
                        help="where to write (default $KPORT_IR_OUT)")
    args = parser.parse_args(argv)
    if not args.out:
        parser.error("--out or KPORT_IR_OUT is required")
    try:
        text = dump(args)
    except DumpError as e:
        print(f"dump_ir: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(_TRITON_CACHE, ignore_errors=True)
    pathlib.Path(args.out).write_text(text)
    print(f"dump_ir: {len(text)} bytes of {args.format} ({args.kernel}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
