#!/bin/sh
# Store/show checks with echo and cat on the simulated brick, run under
# `ev3-sim --over-sys-class` (the brick's devices under /sys/class). Expects
# a large motor on outA, a colour sensor on in3 and the brick LEDs.
# Prints PASS/FAIL per check and `SUMMARY passed/total`; exits 1 on a failure.

passed=0
total=0
check() { # check NAME COMMAND...
    name=$1
    shift
    total=$((total + 1))
    if "$@"; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        echo "FAIL $name"
    fi
}
equals() { # equals FILE EXPECTED
    [ "$(cat "$1")" = "$2" ] || {
        echo "  $1: '$(cat "$1" 2>&1)' != '$2'"
        return 1
    }
}
refused() { # refused COMMAND...: fails, with the errno message in stderr
    ! "$@" 2>/dev/null
}
find_dev() { # find_dev CLASS ADDRESS
    for d in /sys/class/"$1"/*; do
        [ "$(cat "$d/address" 2>/dev/null)" = "$2" ] && echo "$d" && return 0
    done
    return 1
}

m=$(find_dev tacho-motor ev3-ports:outA) || { echo "FAIL no motor on outA"; exit 1; }
s=$(find_dev lego-sensor ev3-ports:in3) || { echo "FAIL no sensor on in3"; exit 1; }
led=/sys/class/leds/led0:green:brick-status

check "motor driver is lego-ev3-l-motor" equals "$m/driver_name" lego-ev3-l-motor
echo 1000 > "$m/speed_sp"
echo 20 > "$m/speed_sp"
check "a shorter store replaces the whole value" equals "$m/speed_sp" 20
check "echo 5000 > speed_sp is refused (EINVAL)" refused sh -c "echo 5000 > '$m/speed_sp'"
check "the refused store leaves the value" equals "$m/speed_sp" 20
# coreutils' echo names the errno (dash's builtin says "I/O error" for all).
check "the refusal says Invalid argument" sh -c "/bin/echo 5000 2>&1 > '$m/speed_sp' | grep -q 'Invalid argument'"
check "speed_sp is accepted without a newline" sh -c "printf 300 > '$m/speed_sp' && [ \"\$(cat '$m/speed_sp')\" = 300 ]"
check "an unknown command is refused" refused sh -c "echo fly > '$m/command'"
echo run-forever > "$m/command"
check "state is running right after run-forever" equals "$m/state" running
check "command is write-only, even for root" refused cat "$m/command"
echo stop > "$m/command"
check "state is empty after stop (coast)" equals "$m/state" ""
check "an unknown stop_action is refused" refused sh -c "echo float > '$m/stop_action'"

echo RGB-RAW > "$s/mode"
check "mode RGB-RAW takes effect at once" equals "$s/num_values" 3
check "value2 exists in RGB-RAW" sh -c "cat '$s/value2' >/dev/null"
check "value3 is refused beyond num_values (ENXIO)" refused cat "$s/value3"
check "text_value is refused (EOPNOTSUPP)" refused cat "$s/text_value"
check "a bad mode is refused" refused sh -c "echo RGB > '$s/mode'"

check "the LED trigger list brackets the active trigger" sh -c "grep -q '\[mmc0\]' '$led/trigger'"
echo timer > "$led/trigger"
check "the timer trigger adds delay_on" equals "$led/delay_on" 500
echo 0 > "$led/brightness"
check "brightness 0 removes the trigger" sh -c "grep -q '\[none\]' '$led/trigger'"
check "delay_on goes with the timer trigger" refused cat "$led/delay_on"
echo 999 > "$led/brightness"
check "brightness is clamped to max_brightness" equals "$led/brightness" 255
check "an unknown trigger is refused" refused sh -c "echo blink > '$led/trigger'"

echo "SUMMARY $passed/$total"
[ "$passed" -eq "$total" ]
