# One EC-Earth3 run: test = member, lb-iteration = chunk - 1, repetition = split. A no-op once
# recorded or when the test or the campaign has finished; ece3-run.sh reads AUTOLB_* variables.
"%AUTOLB.BIN%" campaign exec "%AUTOLB.CAMPAIGN%" --iteration $((%CHUNK% - 1)) --test %MEMBER% --repetition %SPLIT% -- bash "%AUTOLB.ASSETS%/autosubmit/ecearth3-slurm/ece3-run.sh" "%AUTOLB.ECE_RUNTIME%"
