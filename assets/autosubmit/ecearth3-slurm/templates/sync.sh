# Barrier: every run of this lb-iteration is recorded (or the campaign is done).
"%AUTOLB.BIN%" campaign wait "%AUTOLB.CAMPAIGN%" --iteration $((%CHUNK% - 1)) --timeout 0
