"""torch.profiler under the injection library: CUPTI takes one subscriber,
so one of the two cannot record. Prints what the profiler saw; the trace
says what the library saw (cupti_error when it lost)."""
import torch
from torch.profiler import profile, ProfilerActivity

x = torch.ones(1 << 20, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    torch.cuda.nvtx.range_push("kport:profiled")
    y = x * 3.0
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
cuda_events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("profiler cuda events", len(cuda_events))
