# One run: test = member, lb-iteration = chunk - 1, repetition = split. A no-op once recorded
# or when the test or the campaign has finished.
# exec sets AUTOLB_RUN, AUTOLB_RUN_DIR and the rest; `simulate --campaign` takes the run from it.
"%AUTOLB.BIN%" campaign exec "%AUTOLB.CAMPAIGN%" --iteration $((%CHUNK% - 1)) --test %MEMBER% --repetition %SPLIT% -- "%AUTOLB.BIN%" simulate --campaign "%AUTOLB.CAMPAIGN%"
