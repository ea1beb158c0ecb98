"""Which earlier message a message responds to: features, the fitted model, and the scorer.

Learned from people's reply-to annotation of IRC logs (Kummerfeld et al., ACL 2019, CC BY 4.0):
:mod:`.features` turns a message and each earlier candidate into numbers, :mod:`.model` reads the
fitted network (numpy only), :mod:`.scorer` ranks the candidates of one message.
"""
