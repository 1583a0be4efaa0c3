// rsgen document browser
