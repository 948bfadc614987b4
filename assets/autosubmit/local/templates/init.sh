# Create the campaign; a retried job finds it there and succeeds.
"%AUTOLB.BIN%" campaign init "%AUTOLB.CAMPAIGN%" --config "%AUTOLB.CONFIG%" --if-absent
