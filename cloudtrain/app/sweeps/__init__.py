"""The sweep use case: started, driven and resumed (:mod:`.drive`), its trials run here (:mod:`.local`),
found again (:mod:`.lookup`), owned by one process at a time, a detached one's too (:mod:`.owner`)."""
