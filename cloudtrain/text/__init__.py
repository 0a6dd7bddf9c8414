"""How messages say things: counts in words (:mod:`.counts`), numbers as people read them
(:mod:`.numbers`) and the one ``mapped:`` line (:mod:`.mapped_line`). Leaf modules: they import
nothing of cloudtrain's but each other."""
