"""Runs a command on a pseudo-terminal, answers the first "[y/N]" question (or
the first showing argv[4], when given) with argv[3], and prints everything the
terminal showed; exits with its exit code.
For tests of what plinth does when a person is there to ask."""
import json
import os
import pty
import select
import sys

argv = json.loads(sys.argv[1])
env = json.loads(sys.argv[2])
answer = sys.argv[3]
marker = sys.argv[4].encode() if len(sys.argv) > 4 else b'[y/N]'
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(argv[0], argv, env)
out = b''
answered = False
while True:
    try:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            break
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
    if not answered and marker in out:
        os.write(fd, (answer + '\n').encode())
        answered = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode('utf8', 'replace'))
sys.exit(os.waitstatus_to_exitcode(status))
