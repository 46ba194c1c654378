# Written by rextio: compiles each file named on the command line (nothing is executed); the
# first that does not compile is printed as path NUL line NUL column NUL message, exit 3.
import sys
for p in sys.argv[1:]:
    with open(p, "rb") as f:
        src = f.read()
    try:
        compile(src, p, "exec", dont_inherit=True)
    except SyntaxError as e:
        sys.stdout.write("%s\0%d\0%d\0%s" % (p, e.lineno or 0, e.offset or 0, e.msg))
        sys.exit(3)
