#!/usr/bin/env python3
"""python-ev3dev2's Button, Sound and the framebuffer on `ev3-sim`, driven
through the control socket ($EV3SIM_SOCKET) as a test harness in any
language would. Prints PASS/FAIL per behaviour and `SUMMARY passed/total`."""
import mmap
import os
import socket
import threading
import time

from ev3dev2.button import Button
from ev3dev2.sound import Sound

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + str(detail)) if detail and not ok else ""))


def control(*lines):
    """Sends lines to the control socket; returns the reply lines."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["EV3SIM_SOCKET"])
    s.sendall(("\n".join(lines) + "\n").encode())
    s.shutdown(socket.SHUT_WR)
    replies = s.makefile().read().splitlines()
    s.close()
    return replies


# buttons_pressed follows press/release.
button = Button()
check("nothing pressed at start", button.buttons_pressed == [], button.buttons_pressed)
control("press left", "press enter")
check("buttons_pressed sees press", sorted(button.buttons_pressed) == ["enter", "left"], button.buttons_pressed)
control("release left", "release enter")
check("buttons_pressed sees release", button.buttons_pressed == [], button.buttons_pressed)

# A Button-driven menu in the on_<button> + process() style: down moves,
# enter chooses; the presses are clicks (held ~100 ms) from another thread.
items = ["run", "calibrate", "settings", "quit"]
menu = {"at": 0, "chosen": None}


def on_down(pressed):
    if pressed:
        menu["at"] = (menu["at"] + 1) % len(items)


def on_enter(pressed):
    if pressed:
        menu["chosen"] = items[menu["at"]]


button.on_down = on_down
button.on_enter = on_enter


def clicks():
    for line in ("click down", "click down", "click enter"):
        control(line)
        time.sleep(0.1)  # a finger's pause between clicks


clicker = threading.Thread(target=clicks)
clicker.start()
deadline = time.time() + 10
while menu["chosen"] is None and time.time() < deadline:
    button.process()
    time.sleep(0.01)
clicker.join()
check("menu chose the third item by clicks", menu["chosen"] == "settings", menu)

# Errors come back as error lines, and the server keeps serving.
replies = control("nonsense", "plug in1 lego-ev3-l-motor", "ping")
check("unknown line gets an error line", replies[0].startswith("error"), replies)
check("motor on an input port refused", replies[1].startswith("error"), replies)
check("server still serves", replies[2] == "ok pong", replies)

# Sound.beep runs `beep`, which ev3-sim plays on the simulated beeper.
before = control("tones")[0].split()[1:]
Sound().beep()
after = control("tones")[0].split()[1:]
check("Sound.beep played 440 Hz then silence", after[len(before):] == ["440", "0"], after)
Sound().tone([(880, 50, 0)])
tones = control("tones")[0].split()[1:]
check("Sound.tone played 880 Hz", tones[-2:] == ["880", "0"], tones)

# /dev/fb0 maps as python-ev3dev2's Display maps it (MAP_SHARED); the
# simulator's display refresh (`screen`) reads what was drawn.
with open("/sys/class/graphics/fb0/virtual_size") as f:
    width, height = (int(v) for v in f.read().strip().split(","))
with open("/sys/class/graphics/fb0/stride") as f:
    stride = int(f.read())
fd = os.open("/dev/fb0", os.O_RDWR)
fb = mmap.mmap(fd, stride * height, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
black = b"\x00\x00\x00\x00"
fb[0:4 * 10] = black * 10  # the first ten pixels of row 0
fb.flush()
screen = bytes.fromhex(control("screen")[0].split()[1])
check("screen geometry", (width, height, len(screen)) == (178, 128, stride * height), (width, height, len(screen)))
check("drawn pixels read back", screen[:40] == black * 10 and screen[40:44] != black, screen[:48].hex())
fb.close()
os.close(fd)

# python-ev3dev2's Display: its FBIOGET_*SCREENINFO ioctls are answered
# by ev3-sim (seccomp user notification), then it maps /dev/fb0.
from ev3dev2.display import Display

display = Display()
check("Display geometry", (display.xres, display.yres, display.var_info.bits_per_pixel,
                           display.fix_info.line_length) == (178, 128, 32, stride),
      (display.xres, display.yres, display.var_info.bits_per_pixel))
display.clear()
display.draw.rectangle((0, 1, 4, 1), fill="black")  # five pixels of row 1
display.update()
screen = bytes.fromhex(control("screen")[0].split()[1])
row1 = screen[stride:stride + 24]
check("Display drawing read back", row1[:20] == b"\x00" * 20 and row1[20:24] != b"\x00" * 4, row1.hex())

print("SUMMARY %d/%d" % (sum(results), len(results)))
