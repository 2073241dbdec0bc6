"""Sessions: keys now; transcripts and the session index land in stage 2."""
