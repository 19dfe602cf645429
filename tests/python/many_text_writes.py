"""Forty text files written in one function, each asking whether the function
reads it back: the question is asked once per open, not again of every later
open inside it (that made it exponential: this file did not finish).  Every
write here is a record; rank 0 writes the first, and nothing reads it back.
"""
import datetime

import torch.distributed as dist


def write_reports(d, loss):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    dist.all_reduce(loss)
    if dist.get_rank() == 0:
        with open(d + "/summary.txt", "w") as s:
            s.write(str(loss.item()))
    with open(d + "/part0.txt", "w") as h0:
        h0.write(str(0))
    with open(d + "/part1.txt", "w") as h1:
        h1.write(str(1))
    with open(d + "/part2.txt", "w") as h2:
        h2.write(str(2))
    with open(d + "/part3.txt", "w") as h3:
        h3.write(str(3))
    with open(d + "/part4.txt", "w") as h4:
        h4.write(str(4))
    with open(d + "/part5.txt", "w") as h5:
        h5.write(str(5))
    with open(d + "/part6.txt", "w") as h6:
        h6.write(str(6))
    with open(d + "/part7.txt", "w") as h7:
        h7.write(str(7))
    with open(d + "/part8.txt", "w") as h8:
        h8.write(str(8))
    with open(d + "/part9.txt", "w") as h9:
        h9.write(str(9))
    with open(d + "/part10.txt", "w") as h10:
        h10.write(str(10))
    with open(d + "/part11.txt", "w") as h11:
        h11.write(str(11))
    with open(d + "/part12.txt", "w") as h12:
        h12.write(str(12))
    with open(d + "/part13.txt", "w") as h13:
        h13.write(str(13))
    with open(d + "/part14.txt", "w") as h14:
        h14.write(str(14))
    with open(d + "/part15.txt", "w") as h15:
        h15.write(str(15))
    with open(d + "/part16.txt", "w") as h16:
        h16.write(str(16))
    with open(d + "/part17.txt", "w") as h17:
        h17.write(str(17))
    with open(d + "/part18.txt", "w") as h18:
        h18.write(str(18))
    with open(d + "/part19.txt", "w") as h19:
        h19.write(str(19))
    with open(d + "/part20.txt", "w") as h20:
        h20.write(str(20))
    with open(d + "/part21.txt", "w") as h21:
        h21.write(str(21))
    with open(d + "/part22.txt", "w") as h22:
        h22.write(str(22))
    with open(d + "/part23.txt", "w") as h23:
        h23.write(str(23))
    with open(d + "/part24.txt", "w") as h24:
        h24.write(str(24))
    with open(d + "/part25.txt", "w") as h25:
        h25.write(str(25))
    with open(d + "/part26.txt", "w") as h26:
        h26.write(str(26))
    with open(d + "/part27.txt", "w") as h27:
        h27.write(str(27))
    with open(d + "/part28.txt", "w") as h28:
        h28.write(str(28))
    with open(d + "/part29.txt", "w") as h29:
        h29.write(str(29))
    with open(d + "/part30.txt", "w") as h30:
        h30.write(str(30))
    with open(d + "/part31.txt", "w") as h31:
        h31.write(str(31))
    with open(d + "/part32.txt", "w") as h32:
        h32.write(str(32))
    with open(d + "/part33.txt", "w") as h33:
        h33.write(str(33))
    with open(d + "/part34.txt", "w") as h34:
        h34.write(str(34))
    with open(d + "/part35.txt", "w") as h35:
        h35.write(str(35))
    with open(d + "/part36.txt", "w") as h36:
        h36.write(str(36))
    with open(d + "/part37.txt", "w") as h37:
        h37.write(str(37))
    with open(d + "/part38.txt", "w") as h38:
        h38.write(str(38))
    with open(d + "/part39.txt", "w") as h39:
        h39.write(str(39))
    dist.all_reduce(loss)
