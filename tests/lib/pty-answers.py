"""pty-answers.py ANSWERS EOL COMMAND... - run COMMAND on a pseudo-terminal
without echo and answer its questions: each time it prints "? ", the next
letter of ANSWERS is typed (then "y"), followed by EOL ("NL" for a newline,
"" for none: e2fsck reads keys, e4fsck lines).  Prints what COMMAND
printed and exits with its status.  Gives up after 20 s of silence."""
import os, pty, select, sys, termios
answers, eol, cmd = list(sys.argv[1]), sys.argv[2].replace('NL', '\n'), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    attrs = termios.tcgetattr(0)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(0, termios.TCSANOW, attrs)
    os.execvp(cmd[0], cmd)
out, pending = b'', b''
while select.select([fd], [], [], 20)[0]:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    pending += data
    while b'? ' in pending:
        pending = pending[pending.index(b'? ') + 2:]
        os.write(fd, ((answers.pop(0) if answers else 'y') + eol).encode())
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace').replace('\r\n', '\n'))
sys.exit(os.waitstatus_to_exitcode(status))
