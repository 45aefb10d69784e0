#!/usr/bin/env python3
# An unmodified python-ev3dev2 line follower (ev3-sim --world line): a PID
# on ColorSensor.reflected_light_intensity, the line's edge on the right.
import time
from ev3dev2.motor import MoveTank, OUTPUT_B, OUTPUT_C, SpeedPercent
from ev3dev2.sensor import INPUT_3
from ev3dev2.sensor.lego import ColorSensor

tank = MoveTank(OUTPUT_B, OUTPUT_C)
light = ColorSensor(INPUT_3)
kp, ki, kd = 1.5, 0.02, 4.0
integral, last = 0.0, 0.0
end = time.time() + 13
while time.time() < end:
    error = light.reflected_light_intensity - 50
    integral += error
    turn = kp * error + ki * integral + kd * (error - last)
    last = error
    turn = max(-70, min(70, turn))
    tank.on(SpeedPercent(max(-100, min(100, 30 + turn))),
            SpeedPercent(max(-100, min(100, 30 - turn))))
    time.sleep(0.01)
tank.off()
print("DONE")
