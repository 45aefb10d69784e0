#!/usr/bin/env python3
# An unmodified python-ev3dev2 colour sorter (ev3-sim --world sorter):
# drives over coloured patches, switching the colour sensor between
# reflected light and colour on every reading; names each new colour and
# flicks the arm on outA for each.
import time
from ev3dev2.motor import MoveTank, MediumMotor, OUTPUT_A, OUTPUT_B, OUTPUT_C, SpeedPercent
from ev3dev2.sensor import INPUT_3
from ev3dev2.sensor.lego import ColorSensor

tank = MoveTank(OUTPUT_B, OUTPUT_C)
arm = MediumMotor(OUTPUT_A)
eye = ColorSensor(INPUT_3)
seen = []
tank.on(SpeedPercent(20), SpeedPercent(20))
end = time.time() + 7
while time.time() < end:
    light = eye.reflected_light_intensity  # mode COL-REFLECT
    name = eye.color_name                  # mode COL-COLOR: read at once
    if name not in ("White", "NoColor") and (not seen or seen[-1] != name):
        seen.append(name)
        print("SEEN", name, light)
    time.sleep(0.01)
tank.off()
arm.on_for_degrees(SpeedPercent(30), 80)
print("ARM", arm.position)
print("COLOURS", " ".join(seen))
