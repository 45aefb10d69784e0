#!/bin/sh
# A shell robot program (ev3-sim --world bumper): echo and cat only. Drives
# the motors on outB and outC until the touch sensor on in1 is pressed.
set -eu
find_dev() { # CLASS PORT
    for d in /sys/class/$1/*; do
        case "$(cat "$d/address")" in *"$2") echo "$d"; return ;; esac
    done
    exit 1
}
left=$(find_dev tacho-motor outB)
right=$(find_dev tacho-motor outC)
touch=$(find_dev lego-sensor in1)
for m in "$left" "$right"; do
    echo 500 > "$m/speed_sp"
done
echo run-forever > "$left/command"
echo run-forever > "$right/command"
i=0
while [ "$(cat "$touch/value0")" = 0 ]; do
    i=$((i + 1))
    [ $i -lt 2000 ] || { echo TIMEOUT; exit 1; }
    sleep 0.005
done
echo stop > "$left/command"
echo stop > "$right/command"
echo PRESSED
