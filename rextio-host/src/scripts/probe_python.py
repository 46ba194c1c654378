# Written by rextio: prints what this interpreter is, as one JSON object.
import json
import platform
import struct
import sys
import sysconfig

print(json.dumps({
    "implementation": platform.python_implementation(),
    "version": list(sys.version_info[:3]),
    "sys_executable": sys.executable,
    "prefix": sys.prefix,
    "base_prefix": getattr(sys, "base_prefix", sys.prefix),
    "platform": sysconfig.get_platform(),
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
    "soabi": sysconfig.get_config_var("SOABI"),
    "abiflags": getattr(sys, "abiflags", ""),
    "pointer_width": struct.calcsize("P") * 8,
}))
