# unixtry.py SOCK: connect to the UNIX socket SOCK, ask for a tunnel to
# allowed.test:443 and print the status code, or the errno name of the
# failure.
import errno, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
    sys.exit(0)
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
print(s.recv(64).split(b" ")[1].decode())
